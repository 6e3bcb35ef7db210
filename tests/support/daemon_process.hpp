#pragma once
// Runs the real weir-server binary for live tests: in its own working
// directory, with stderr captured, stopped by signal at the end.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace weir::test {

struct run_result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs `binary` to completion in `cwd` with the WEIR_* environment cleared
/// and `env` added; kills it after `timeout`.
run_result run_binary(const std::filesystem::path& binary, const std::vector<std::string>& args,
                      const std::filesystem::path& cwd, const std::vector<std::string>& env = {},
                      std::chrono::milliseconds timeout = std::chrono::seconds(30));

class daemon_process {
 public:
  /// Starts weir-server in `workdir` (default config, admin HTTP off) with `args` appended.
  /// A non-zero `file_size_limit` is set as the daemon's RLIMIT_FSIZE (ulimit -f): a
  /// real kernel-enforced way to make a WAB write fail part-way.
  daemon_process(std::filesystem::path workdir, std::vector<std::string> args = {},
                 std::vector<std::string> env = {}, std::uint64_t file_size_limit = 0);
  ~daemon_process();
  daemon_process(const daemon_process&) = delete;
  daemon_process& operator=(const daemon_process&) = delete;

  /// Waits until the socket accepts connections; false if the process exits first.
  bool wait_ready(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  /// Waits for the process to exit by itself; returns its status, or -1 on timeout.
  int wait_exit(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  /// Sends `sig` and waits for exit; returns the exit status, or -1 if it had to be killed.
  int stop(int sig = 15, std::chrono::milliseconds timeout = std::chrono::seconds(20));
  bool running();
  /// SIGSTOP, then waits until the kernel reports the whole process stopped:
  /// kill() returns before every thread has stopped, and on a busy machine
  /// the rest go on running for milliseconds. False if it did not stop.
  bool freeze(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  void thaw();
  std::string log() const;
  pid_t pid() const { return pid_; }
  std::string socket_path() const { return (workdir_ / "var/run/weir.sock").string(); }
  const std::filesystem::path& workdir() const { return workdir_; }

 private:
  std::filesystem::path workdir_;
  pid_t pid_ = -1;
  int status_ = -1;
  bool reaped_ = false;
};

}  // namespace weir::test
