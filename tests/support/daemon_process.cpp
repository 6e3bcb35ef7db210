#include "support/daemon_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "support/test_paths.hpp"
#include "weir/client.hpp"

extern char** environ;

namespace weir::test {

namespace {

std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "WEIR_", 5) != 0) env.emplace_back(*e);
  // weir-ctl reads /etc/weir/weir.yaml by default: not a machine's own
  // install, not one a package test put there.
  const bool named = std::any_of(extra.begin(), extra.end(), [](const std::string& e) { return e.rfind("WEIR_CTL_CONFIG=", 0) == 0; });
  if (!named) env.emplace_back("WEIR_CTL_CONFIG=");
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

pid_t spawn(const std::filesystem::path& binary, const std::vector<std::string>& args,
            const std::filesystem::path& cwd, const std::vector<std::string>& env,
            const std::filesystem::path& out_file, const std::filesystem::path& err_file,
            std::uint64_t file_size_limit = 0) {
  std::vector<std::string> argv_s{binary.string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  const auto env_s = child_environment(env);
  // Everything the child needs is allocated before the fork: between fork
  // and exec the child of a threaded process may only make async-signal-safe
  // calls. A malloc there deadlocked now and then under AddressSanitizer,
  // whose allocator lock another thread of the test could hold at the fork.
  std::vector<char*> argv, envp;
  for (const auto& a : argv_s) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : env_s) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    if (::chdir(cwd.c_str()) != 0) _exit(127);
    const int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int in = ::open("/dev/null", O_RDONLY);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    // Unblock every signal: the test runner's mask must not leak into the daemon.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (file_size_limit > 0) {
      rlimit lim{file_size_limit, file_size_limit};
      ::setrlimit(RLIMIT_FSIZE, &lim);
    }
    ::execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  return pid;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

run_result run_binary(const std::filesystem::path& binary, const std::vector<std::string>& args,
                      const std::filesystem::path& cwd, const std::vector<std::string>& env,
                      std::chrono::milliseconds timeout) {
  const auto out_file = cwd / ".run.out", err_file = cwd / ".run.err";
  const pid_t pid = spawn(binary, args, cwd, env, out_file, err_file);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  run_result r{exit_code_of(status), slurp(out_file), slurp(err_file)};
  std::filesystem::remove(out_file);
  std::filesystem::remove(err_file);
  return r;
}

daemon_process::daemon_process(std::filesystem::path workdir, std::vector<std::string> args,
                               std::vector<std::string> env, std::uint64_t file_size_limit)
    : workdir_(std::move(workdir)) {
  std::vector<std::string> all{"--set", "admin.listen="};
  all.insert(all.end(), args.begin(), args.end());
  pid_ = spawn(binary("weir-server"), all, workdir_, env, workdir_ / "daemon.out", workdir_ / "daemon.err",
               file_size_limit);
}

daemon_process::~daemon_process() {
  if (!reaped_) stop(SIGKILL);
}

bool daemon_process::running() {
  if (reaped_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    reaped_ = true;
    status_ = exit_code_of(status);
    return false;
  }
  return true;
}

bool daemon_process::freeze(std::chrono::milliseconds timeout) {
  if (reaped_) return false;
  ::kill(pid_, SIGSTOP);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    // WUNTRACED reports the stop once the last thread has stopped.
    const pid_t got = ::waitpid(pid_, &status, WUNTRACED | WNOHANG);
    if (got == pid_ && WIFSTOPPED(status)) return true;
    if (got == pid_) {
      reaped_ = true;
      status_ = exit_code_of(status);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

void daemon_process::thaw() {
  if (!reaped_) ::kill(pid_, SIGCONT);
}

bool daemon_process::wait_ready(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // A daemon that is not ready says why in its log, which its work
  // directory (often a temporary one) does not keep: the test's output does.
  auto not_ready = [&] {
    const std::string text = log();
    std::fprintf(stderr, "daemon in %s not ready (%s); its log ends:\n%s\n", workdir_.c_str(),
                 running() ? "still starting" : "it exited",
                 text.substr(text.size() > 3000 ? text.size() - 3000 : 0).c_str());
    return false;
  };
  while (std::chrono::steady_clock::now() < deadline) {
    if (!running()) return not_ready();
    try {
      auto c = weir::client::connection::connect_unix(socket_path());
      c.set_timeout(std::chrono::seconds(5));
      c.health_check();
      // The socket answers before the admin server starts and the ready
      // line is written; tests read both right after this.
      while (log().find("weir-server ready") == std::string::npos) {
        if (!running() || std::chrono::steady_clock::now() >= deadline) return not_ready();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      return true;
    } catch (const weir::client::client_error&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  return not_ready();
}

int daemon_process::wait_exit(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() > deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return status_;
}

int daemon_process::stop(int sig, std::chrono::milliseconds timeout) {
  if (reaped_) return status_;
  ::kill(pid_, sig);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      reaped_ = true;
      status_ = -1;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  reaped_ = true;
  status_ = exit_code_of(status);
  // A daemon asked to stop that does not exit 0 says why on its stderr
  // (a sanitizer report, a failed final sync): the test's output carries it.
  if (status_ != 0 && (sig == SIGTERM || sig == SIGINT)) {
    const auto text = log();
    constexpr std::size_t tail = 8192;
    std::fprintf(stderr, "--- daemon in %s exited %d on signal %d; the end of its stderr:\n%s\n---\n",
                 workdir_.c_str(), status_, sig, text.substr(text.size() > tail ? text.size() - tail : 0).c_str());
  }
  return status_;
}

std::string daemon_process::log() const { return slurp(workdir_ / "daemon.err"); }

}  // namespace weir::test
