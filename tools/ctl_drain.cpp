// weir-ctl drain: retires a daemon (docs/operations.md, "Retire a host").
// Sends SIGUSR1 to the weir-server that holds the data directory's lock —
// it stops taking pushes, delivers every record to every sink, and stops —
// then shows what is left until the process is gone, and checks the WAB it
// left: exit 0 only when nothing undelivered is in it.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "tools/ctl_commands.hpp"
#include "tools/ctl_segment_scan.hpp"
#include "wab/confirm_cursor.hpp"
#include "wab/dry_run_file_io.hpp"
#include "wab/segment_format.hpp"
#include "weir/admin_http.hpp"

namespace weir::ctl {

namespace {

namespace fs = std::filesystem;
using clock = std::chrono::steady_clock;

/// The pid of the weir-server holding `data_dir`'s lock; nullopt when none
/// holds it (the lock can be taken), with why in `why`.
std::optional<pid_t> lock_holder(const std::string& data_dir, std::string& why) {
  const std::string path = data_dir + "/weir.lock";
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    why = "cannot open " + path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  std::optional<pid_t> holder;
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
    why = "no weir-server runs on " + data_dir + " (its lock is free)";
  } else {
    char buf[32] = {};
    if (::pread(fd, buf, sizeof buf - 1, 0) > 0 && std::atol(buf) > 0) holder = static_cast<pid_t>(std::atol(buf));
    else why = path + " is locked but names no pid";
  }
  ::close(fd);
  return holder;
}

bool still_held(const std::string& data_dir) {
  std::string why;
  return lock_holder(data_dir, why).has_value();
}

/// What the admin server says is left: the records of the sink furthest
/// behind, and each sink that has any ("hook 2863 (down: ...)").
struct left_now {
  double records = 0;
  std::string per_sink;
};

std::optional<left_now> ask_admin(const options& o) {
  if (o.admin.empty()) return std::nullopt;
  try {
    const auto res = client::admin_get(o.admin, "/api/v1/status", std::chrono::milliseconds(1000));
    if (res.status != 200) return std::nullopt;
    const auto status = nlohmann::json::parse(res.body);
    left_now out;
    for (const auto& sink : status.value("sinks", nlohmann::json::array())) {
      const double lag = sink.value("lag_records", 0.0);
      out.records = std::max(out.records, lag);
      if (lag <= 0) continue;
      out.per_sink += std::string(out.per_sink.empty() ? "" : ", ") + sink.value("name", "?") + " " +
                      std::to_string(static_cast<std::uint64_t>(lag));
      const std::string health = sink.value("health", "healthy");
      if (health != "healthy")
        out.per_sink += " (" + health + (sink.value("last_error", "").empty() ? "" : ": " + sink.value("last_error", "")) + ")";
    }
    return out;
  } catch (const std::exception&) {
    return std::nullopt;  // between the admin server's end and the process's
  }
}

/// Records the daemon left undelivered in its WAB: those past the oldest
/// sink cursor of each shard (every record of a shard without one).
std::uint64_t undelivered_in_wab(const std::string& data_dir) {
  wab::dry_run_file_io io;
  std::uint64_t left = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(data_dir) / "wab", ec)) {
    if (!wab::parse_shard_dir_name(entry.path().filename().string())) continue;
    const auto oldest = wab::span_of(wab::load_every_cursor(io, entry.path().string())).oldest;
    for (const auto& [seq, path] : segment_files(entry.path())) {
      if (oldest && seq < oldest->sequence) continue;
      const auto scan = scan_segment(io, path.string());
      std::uint64_t records = scan.records;
      if (oldest && seq == oldest->sequence) records -= std::min(records, oldest->index - 1);
      left += records;
    }
  }
  return left;
}

std::string number(double n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

}  // namespace

int drain_command(const options& o, const std::vector<std::string>& args) {
  double timeout_s = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--timeout" && i + 1 < args.size()) {
      char* end = nullptr;
      timeout_s = std::strtod(args[i + 1].c_str(), &end);
      if (*end != '\0' || timeout_s < 0) return usage_error("drain", "--timeout needs seconds (0: no limit), got " + args[i + 1]);
      ++i;
    } else {
      return usage_error("drain", "unknown argument " + args[i]);
    }
  }
  if (!require_data_dir(o)) return 2;
  std::string why;
  const auto pid = lock_holder(o.data_dir, why);
  if (!pid) {
    const auto left = undelivered_in_wab(o.data_dir);
    std::fprintf(stderr, "weir-ctl drain: %s%s\n", why.c_str(),
                 left == 0 ? "; nothing undelivered is in its WAB"
                           : ("; its WAB holds " + std::to_string(left) +
                              " records not yet delivered (a start delivers them)").c_str());
    return 2;
  }
  if (::kill(*pid, SIGUSR1) != 0) {
    std::fprintf(stderr, "weir-ctl drain: cannot signal weir-server (pid %d): %s%s\n", static_cast<int>(*pid),
                 std::strerror(errno), errno == EPERM ? " (run weir-ctl as the daemon's user or as root)" : "");
    return 2;
  }
  const bool tty = ::isatty(STDOUT_FILENO) != 0;
  std::printf("retiring weir-server (pid %d): no more pushes are taken; waiting until every record is delivered\n",
              static_cast<int>(*pid));
  std::fflush(stdout);
  const auto started = clock::now();
  auto said = started;
  std::optional<std::pair<clock::time_point, double>> before;
  left_now last;
  while (still_held(o.data_dir)) {
    if (timeout_s > 0 && clock::now() - started >= std::chrono::duration<double>(timeout_s)) {
      if (tty) std::printf("\n");
      std::printf("gave up after %.0f s: %s records left%s%s; the daemon goes on delivering (SIGTERM stops it, "
                  "keeping the rest for its next start)\n",
                  timeout_s, number(last.records).c_str(), last.per_sink.empty() ? "" : ": ", last.per_sink.c_str());
      return 1;
    }
    if (auto now = ask_admin(o)) {
      last = *now;
      const auto t = clock::now();
      std::string line = number(last.records) + " records left";
      if (before && t > before->first) {
        const double rate = (before->second - last.records) / std::chrono::duration<double>(t - before->first).count();
        if (rate > 0) line += ", " + number(rate) + "/s, about " + number(last.records / rate) + " s";
      }
      if (!last.per_sink.empty()) line += " (" + last.per_sink + ")";
      if (!before || t - before->first >= std::chrono::seconds(2)) before = {t, last.records};
      if (tty) {
        std::printf("\r\x1b[K%s", line.c_str());
        std::fflush(stdout);
      } else if (t - said >= std::chrono::seconds(5)) {
        said = t;
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  if (tty) std::printf("\r\x1b[K");
  const auto left = undelivered_in_wab(o.data_dir);
  if (left > 0) {
    std::printf("weir-server (pid %d) stopped with %llu records not yet delivered in its WAB (it was stopped before "
                "it was done; they are delivered after its next start)\n",
                static_cast<int>(*pid), static_cast<unsigned long long>(left));
    return 1;
  }
  std::printf("retired: weir-server (pid %d) stopped after %.1f s with every record delivered to every sink\n",
              static_cast<int>(*pid), std::chrono::duration<double>(clock::now() - started).count());
  return 0;
}

}  // namespace weir::ctl
