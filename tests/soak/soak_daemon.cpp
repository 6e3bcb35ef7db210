#include "soak/soak_daemon.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "weir/client.hpp"

extern char** environ;

namespace weir::soak {

namespace {

/// The soak's environment without WEIR_* variables: an operator's settings
/// must not change the daemon under test.
std::vector<std::string> clean_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "WEIR_", 5) != 0) env.emplace_back(*e);
  return env;
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

soak_daemon::soak_daemon(daemon_spec spec) : spec_(std::move(spec)) {}

soak_daemon::~soak_daemon() {
  if (running()) {
    signal(SIGKILL);
    reap(std::chrono::seconds(10));
  }
}

void soak_daemon::start(const std::string& marker) {
  if (running()) throw std::logic_error("soak_daemon::start while a daemon runs");
  {
    std::ofstream log(spec_.log, std::ios::app);
    log << "--- soak: " << marker << '\n';
  }
  std::error_code ec;
  log_offset_ = std::filesystem::file_size(spec_.log, ec);

  std::vector<std::string> argv_s{spec_.binary.string()};
  argv_s.insert(argv_s.end(), spec_.args.begin(), spec_.args.end());
  const auto env_s = clean_environment();
  std::vector<char*> argv, envp;
  for (auto& a : argv_s) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (auto& e : env_s) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    // If the soak itself dies (Ctrl-C, a crash), its daemon goes with it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) _exit(127);
    if (::chdir(spec_.workdir.c_str()) != 0) _exit(127);
    const int log = ::open(spec_.log.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0600);
    const int in = ::open("/dev/null", O_RDONLY);
    ::dup2(in, 0);
    ::dup2(log, 1);
    ::dup2(log, 2);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  pid_ = pid;
  status_.reset();
}

bool soak_daemon::running() {
  if (pid_ < 0 || status_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    status_ = exit_code_of(status);
    return false;
  }
  return true;
}

bool soak_daemon::wait_ready(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!running()) return false;
    try {
      auto c = client::connection::connect_unix(spec_.socket);
      c.set_timeout(std::chrono::seconds(2));
      c.health_check();
      return true;
    } catch (const client::client_error&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  return false;
}

void soak_daemon::signal(int sig) {
  if (running()) ::kill(pid_, sig);
}

std::optional<int> soak_daemon::reap(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return status_;
}

std::string soak_daemon::run_log() const {
  std::ifstream in(spec_.log);
  in.seekg(static_cast<std::streamoff>(log_offset_));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace weir::soak
