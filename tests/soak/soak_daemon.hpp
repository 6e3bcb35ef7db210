#pragma once
// The real weir-server, started again and again on one data directory.
// tests/support/daemon_process runs the build's own binary with a fresh log
// per process; the soak needs a binary chosen by flag and one log that keeps
// every run (with a marker line before each), so it has its own launcher.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace weir::soak {

struct daemon_spec {
  std::filesystem::path binary;
  std::filesystem::path workdir;  // the daemon's working directory
  std::vector<std::string> args;  // --set flags
  std::filesystem::path log;      // stdout and stderr of every run, appended
  std::string socket;             // listen.unix, for the readiness probe
};

class soak_daemon {
 public:
  explicit soak_daemon(daemon_spec spec);
  ~soak_daemon();  // kills a daemon still running: a soak never leaves one behind
  soak_daemon(const soak_daemon&) = delete;
  soak_daemon& operator=(const soak_daemon&) = delete;

  /// Writes `marker` to the log, then starts a new daemon process.
  void start(const std::string& marker);
  /// True once the socket answers a HealthCheck; false if the process exits
  /// or `timeout` passes first.
  bool wait_ready(std::chrono::milliseconds timeout);
  void signal(int sig);
  /// Waits for the process to exit; its status (128+signal when killed), or
  /// nullopt after `timeout`.
  std::optional<int> reap(std::chrono::milliseconds timeout);
  bool running();
  pid_t pid() const { return pid_; }
  /// What the current (or last) run wrote to the log.
  std::string run_log() const;

 private:
  daemon_spec spec_;
  pid_t pid_ = -1;
  std::uintmax_t log_offset_ = 0;
  std::optional<int> status_;
};

}  // namespace weir::soak
