#include "bench/machine_info.hpp"

#include <sched.h>
#include <sys/statfs.h>
#include <sys/utsname.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#ifndef WEIR_SOURCE_DIR
#define WEIR_SOURCE_DIR "."
#endif

namespace weir::bench {

namespace {

std::string command_output(const std::string& command) {
  std::unique_ptr<FILE, decltype(&::pclose)> p(::popen(command.c_str(), "r"), ::pclose);
  if (!p) return "";
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p.get())) out += buf;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

/// The commit weir-bench was built from, "+dirty" when the tree had changes.
std::string git_commit() {
  const std::string git = "git -C '" + std::string(WEIR_SOURCE_DIR) + "' ";
  std::string commit = command_output(git + "rev-parse --short=12 HEAD 2>/dev/null");
  if (commit.empty()) return "unknown";
  if (!command_output(git + "status --porcelain --untracked-files=no 2>/dev/null").empty()) commit += "+dirty";
  return commit;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "unknown";
}

std::string filesystem_name(long type) {
  switch (static_cast<unsigned long>(type)) {
    case 0xEF53: return "ext4";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x01021994: return "tmpfs";
    case 0x794C7630: return "overlayfs";
    case 0x2FC12FC1: return "zfs";
    case 0x6969: return "nfs";
    case 0xF2F52010: return "f2fs";
    default: {
      std::ostringstream s;
      s << "0x" << std::hex << type;
      return s.str();
    }
  }
}

/// The device mounted at the longest mount point that holds `dir`
/// (/proc/self/mountinfo: field 5 the mount point, after " - " the type and source).
std::string device_of(const std::string& dir) {
  std::error_code ec;
  const auto target = std::filesystem::canonical(dir, ec).string();
  std::ifstream in("/proc/self/mountinfo");
  std::string line, best_point, best_device = "unknown";
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, major_minor, root, point;
    fields >> id >> parent >> major_minor >> root >> point;
    const auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream tail(line.substr(dash + 3));
    std::string type, source;
    tail >> type >> source;
    const bool holds = target == point || (target.rfind(point, 0) == 0 && (point == "/" || target[point.size()] == '/'));
    if (holds && point.size() >= best_point.size()) {
      best_point = point;
      best_device = source + " (" + major_minor + ")";
    }
  }
  return best_device;
}

}  // namespace

std::string cpus_allowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return "unknown";
  std::string out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    int last = cpu;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    if (!out.empty()) out += ',';
    out += std::to_string(cpu);
    if (last > cpu) out += '-' + std::to_string(last);
    cpu = last;
  }
  return out;
}

nlohmann::json describe_machine(const std::string& wab_dir) {
  utsname u{};
  ::uname(&u);
  struct statfs fs {};
  const bool have_fs = ::statfs(wab_dir.c_str(), &fs) == 0;
  // What does not change within a run is read once (git runs twice for it).
  static const std::string commit = git_commit(), model = cpu_model();
  return {{"git_commit", commit},
          {"cpu_model", model},
          {"cores", std::thread::hardware_concurrency()},
          {"kernel", std::string(u.sysname) + " " + u.release},
          {"wab_filesystem", have_fs ? filesystem_name(static_cast<long>(fs.f_type)) : "unknown"},
          {"wab_device", device_of(wab_dir)},
          {"cpus_allowed", cpus_allowed()},
          {"placement", "producers and daemon share cpus_allowed, unpinned"}};
}

}  // namespace weir::bench
