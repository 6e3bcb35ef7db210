#include "runtime/usable_cores.hpp"

#include <sched.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "runtime/whole_number.hpp"

namespace weir {

namespace {

/// The daemon's cgroup v2 directory, from the "0::" line of /proc/self/cgroup.
std::filesystem::path own_cgroup() {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("0::", 0) == 0) return std::filesystem::path("/sys/fs/cgroup") / line.substr(3).erase(0, 1);
  return "/sys/fs/cgroup";
}

}  // namespace

std::optional<unsigned> cores_of_cpu_max(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.remove_suffix(1);
  const auto space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const auto quota = whole_number<unsigned long long>(line.substr(0, space));  // "max" does not parse: no limit
  const auto period = whole_number<unsigned long long>(line.substr(space + 1));
  if (!quota || !period || *period == 0) return std::nullopt;
  return static_cast<unsigned>(std::max<unsigned long long>(1, (*quota + *period - 1) / *period));
}

std::optional<unsigned> cpu_quota_cores() {
  std::optional<unsigned> tightest;
  for (auto dir = own_cgroup(); dir.string().rfind("/sys/fs/cgroup", 0) == 0; dir = dir.parent_path()) {
    std::ifstream in(dir / "cpu.max");
    std::string line;
    if (in && std::getline(in, line))
      if (const auto quota = cores_of_cpu_max(line)) tightest = std::min(tightest.value_or(*quota), *quota);
    if (dir == "/sys/fs/cgroup") break;
  }
  return tightest;
}

std::vector<int> allowed_cpus(unsigned count) {
  std::vector<int> cpus;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE && cpus.size() < count; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  return cpus;
}

unsigned usable_cores() {
  const auto allowed = allowed_cpus(CPU_SETSIZE);
  unsigned cores = allowed.empty() ? std::thread::hardware_concurrency() : static_cast<unsigned>(allowed.size());
  if (const auto quota = cpu_quota_cores()) cores = std::min(cores, *quota);
  return std::max(cores, 1u);
}

}  // namespace weir
