#include "support/server_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <stdexcept>

extern char** environ;

namespace weir::test {

void server_process::start(const std::string& program, const std::vector<std::string>& args,
                           const std::filesystem::path& log, const std::string& install_hint) {
  std::vector<std::string> owned{program};
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  const std::string console = log.string();
  posix_spawn_file_actions_addopen(&files, 1, console.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&files, 1, 2);
  const int rc = posix_spawnp(&pid_, program.c_str(), &files, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error("cannot start " + program + " (" + install_hint + ")");
  }
}

bool server_process::exited() {
  int status = 0;
  if (pid_ <= 0) return true;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
  pid_ = -1;
  return true;
}

void server_process::stop() { end(SIGTERM); }
void server_process::kill() { end(SIGKILL); }

void server_process::end(int signal) {
  if (pid_ <= 0) return;
  ::kill(pid_, signal);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

}  // namespace weir::test
