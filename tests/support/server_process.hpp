#pragma once
// A server a test runs as its child: started with its arguments, its output
// into a log file, stopped with SIGTERM (or killed) and waited for.
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace weir::test {

class server_process {
 public:
  server_process() = default;
  ~server_process() { stop(); }
  server_process(const server_process&) = delete;
  server_process& operator=(const server_process&) = delete;

  /// Starts `program` (looked up in PATH) with `args`, stdout and stderr
  /// appended to `log`; throws naming `install_hint` when it cannot start.
  void start(const std::string& program, const std::vector<std::string>& args, const std::filesystem::path& log,
             const std::string& install_hint);
  /// Whether it exited (reaping it when it did).
  bool exited();
  /// SIGTERM, then waits for it; nothing when it is not running.
  void stop();
  /// SIGKILL, then waits for it.
  void kill();
  pid_t pid() const { return pid_; }

 private:
  void end(int signal);
  pid_t pid_ = -1;
};

}  // namespace weir::test
