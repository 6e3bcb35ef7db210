#include "bench/daemon_runner.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bench/unix_socket.hpp"
#include "bench/watchdog.hpp"

namespace weir::bench {

namespace {

bool socket_accepts(const std::string& path) {
  const sockaddr_un addr = unix_address(path);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

/// `binary`, then `first`, then one --set per setting.
std::vector<std::string> server_args(const std::string& binary, std::vector<std::string> first,
                                     const std::map<std::string, std::string>& settings) {
  std::vector<std::string> args{binary};
  args.insert(args.end(), first.begin(), first.end());
  for (const auto& [k, v] : settings) {
    args.push_back("--set");
    args.push_back(k + "=" + v);
  }
  return args;
}

/// Runs `args` in `dir` with its stdout and stderr on `out`; its pid.
pid_t spawn_in(const std::string& dir, std::vector<std::string> args, int out) {
  // Made before the fork: between fork and exec the child of a threaded
  // process may not allocate (another thread may hold the allocator's lock).
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) _exit(127);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

}  // namespace

std::uint16_t unused_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("no free loopback port for the daemon's admin server");
  return ntohs(addr.sin_port);
}

std::string refused_settings(const std::string& server_binary, const std::string& workdir,
                             const std::map<std::string, std::string>& settings) {
  std::filesystem::create_directories(workdir);
  std::string scratch = workdir + "/check-XXXXXX";
  if (!::mkdtemp(scratch.data())) throw std::runtime_error("cannot create a directory under " + workdir);
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = spawn_in(scratch, server_args(server_binary, {"--check-config"}, settings), out[1]);
  ::close(out[1]);
  std::string said;
  char buf[512];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    said.append(buf, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::error_code ec;
  std::filesystem::remove_all(scratch, ec);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return "cannot run " + server_binary;
  while (!said.empty() && said.back() == '\n') said.pop_back();
  return said.empty() ? "weir-server --check-config failed" : said;
}

daemon_runner::daemon_runner(const std::string& server_binary, const std::string& workdir,
                             const std::map<std::string, std::string>& settings)
    : socket_(workdir + "/var/run", "weir.sock"),
      admin_("127.0.0.1:" + std::to_string(unused_loopback_port())),
      log_(workdir + "/daemon.log") {
  // No config file in the working directory: built-in defaults plus the
  // scenario. The admin server is on for the counters weir-bench reports.
  std::vector<std::string> first{"--set", "admin.listen=" + admin_};
  if (socket_.moved()) first.insert(first.end(), {"--set", "listen.unix=" + socket_.path()});
  const int out = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (out < 0) throw std::runtime_error("cannot write " + log_ + ": " + std::strerror(errno));
  const auto forked = std::chrono::steady_clock::now();
  pid_ = spawn_in(workdir, server_args(server_binary, std::move(first), settings), out);
  ::close(out);
  track_daemon(pid_, log_);
  // Polled every millisecond: the startup time is a measurement (recovery).
  while (std::chrono::steady_clock::now() - forked < std::chrono::minutes(2)) {
    if (socket_accepts(socket_.path())) {
      startup_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - forked).count();
      return;
    }
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      untrack_daemon(pid_);
      pid_ = -1;
      throw std::runtime_error("weir-server exited at startup; see " + log_);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  end(SIGTERM);
  throw std::runtime_error("weir-server did not open its socket within 2 minutes; see " + log_);
}

daemon_runner::~daemon_runner() {
  if (pid_ > 0) end(SIGTERM);
}

int daemon_runner::stop() {
  if (pid_ <= 0) return -1;
  const pid_t pid = pid_;
  const int status = end(SIGTERM);
  if (status == stop_timed_out)
    throw std::runtime_error("weir-server (pid " + std::to_string(pid) + ") did not exit within " +
                             std::to_string(stop_timeout_s) + " s of SIGTERM and was killed; see " + log_);
  return status;
}

int daemon_runner::end(int signal) {
  ::kill(pid_, signal);
  int status = 0;
  // A daemon that does not stop is a finding, not a reason for weir-bench to hang.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(stop_timeout_s);
  for (;;) {
    const pid_t reaped = ::waitpid(pid_, &status, WNOHANG);
    if (reaped == pid_) break;
    if (reaped < 0 && errno != EINTR) {  // not our child any more: nothing to wait for, nothing to kill
      untrack_daemon(pid_);
      pid_ = -1;
      return -1;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      untrack_daemon(pid_);
      pid_ = -1;
      return stop_timed_out;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  untrack_daemon(pid_);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

double daemon_runner::rss_mib() const {
  if (pid_ <= 0) return 0;
  std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;  // kB
  return 0;
}

void daemon_runner::kill_hard() {
  if (pid_ > 0) end(SIGKILL);
}

}  // namespace weir::bench
