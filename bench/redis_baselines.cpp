#include "bench/redis_baselines.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bench/daemon_runner.hpp"
#include "bench/load_driver.hpp"
#include "bench/watchdog.hpp"

extern char** environ;

namespace weir::bench {

namespace {

using clock = std::chrono::steady_clock;

int connect_loopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  timeval limit{30, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  return fd;
}

/// redis-server in the foreground, killed with its directory's round.
class redis_process {
 public:
  redis_process(const std::string& dir) : port_(unused_loopback_port()) {
    std::vector<std::string> args{"redis-server", "--port", std::to_string(port_), "--bind", "127.0.0.1",
                                  "--dir", dir, "--appendonly", "yes", "--appendfsync", "always",
                                  "--save", "", "--logfile", dir + "/redis.log", "--protected-mode", "no"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    // Its output goes to its log file, not into weir-bench's results.
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    const int spawned = ::posix_spawnp(&pid_, "redis-server", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) throw std::runtime_error("cannot start redis-server (make bench installs it)");
    track_daemon(pid_, dir + "/redis.log");  // killed too when --deadline ends the run
    for (auto deadline = clock::now() + std::chrono::seconds(20); clock::now() < deadline;) {
      const int fd = connect_loopback(port_);
      if (fd >= 0) {
        const bool up = ::send(fd, "PING\r\n", 6, MSG_NOSIGNAL) == 6 && answered(fd);
        ::close(fd);
        if (up) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    stop();
    throw std::runtime_error("redis-server did not answer PING within 20 s (see " + dir + "/redis.log)");
  }
  ~redis_process() { stop(); }
  redis_process(const redis_process&) = delete;
  redis_process& operator=(const redis_process&) = delete;

  std::uint16_t port() const { return port_; }

 private:
  static bool answered(int fd) {
    char buf[64];
    return ::recv(fd, buf, sizeof buf, 0) > 0;
  }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);  // its append-only file is this round's, thrown away with it
    ::waitpid(pid_, nullptr, 0);
    untrack_daemon(pid_);
    pid_ = -1;
  }

  std::uint16_t port_;
  pid_t pid_ = -1;
};

std::string lpush_command(std::size_t payload_bytes) {
  return "*3\r\n$5\r\nLPUSH\r\n$4\r\nweir\r\n$" + std::to_string(payload_bytes) + "\r\n" +
         std::string(payload_bytes, 'w') + "\r\n";
}

struct client_result {
  std::uint64_t answered = 0;
  std::vector<double> latency_us;
  bool failed = false;
};

/// One client: `pipeline` commands in flight, each answer (":N\r\n", one
/// line) releasing the next.
void run_client(std::uint16_t port, const std::string& command, std::size_t pipeline, clock::time_point stop_at,
                client_result& out) {
  const int fd = connect_loopback(port);
  if (fd < 0) {
    out.failed = true;
    return;
  }
  std::deque<clock::time_point> sent;
  char buf[16 * 1024];
  for (;;) {
    std::string burst;
    while (clock::now() < stop_at && sent.size() < pipeline) {
      burst += command;
      sent.push_back(clock::now());
    }
    if (!burst.empty() && ::send(fd, burst.data(), burst.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(burst.size())) {
      out.failed = true;
      break;
    }
    if (sent.empty()) break;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      out.failed = true;
      break;
    }
    const auto now = clock::now();
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] == '-') out.failed = true;  // an error answer: not a durable push
      if (buf[i] != '\n' || sent.empty()) continue;
      out.latency_us.push_back(std::chrono::duration<double, std::micro>(now - sent.front()).count());
      sent.pop_front();
      ++out.answered;
    }
    if (out.failed) break;
  }
  ::close(fd);
}

}  // namespace

bool redis_available() {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
  std::size_t at = 0;
  while (at <= path.size()) {
    const auto end = std::min(path.find(':', at), path.size());
    if (::access((path.substr(at, end - at) + "/redis-server").c_str(), X_OK) == 0) return true;
    at = end + 1;
  }
  return false;
}

baseline_result measure_redis_lpush(const std::string& dir, int clients, std::size_t pipeline,
                                    std::size_t payload_bytes, double seconds) {
  redis_process redis(dir);
  const std::string command = lpush_command(payload_bytes);
  std::vector<client_result> results(static_cast<std::size_t>(clients));
  const auto start = clock::now();
  const auto stop_at = start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
  std::vector<std::thread> threads;
  for (auto& r : results)
    threads.emplace_back([&, out = &r] { run_client(redis.port(), command, pipeline, stop_at, *out); });
  for (auto& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
  std::uint64_t answered = 0;
  std::vector<double> latency;
  for (auto& r : results) {
    if (r.failed) throw std::runtime_error("redis-server refused or dropped an LPUSH (see " + dir + "/redis.log)");
    answered += r.answered;
    latency.insert(latency.end(), r.latency_us.begin(), r.latency_us.end());
  }
  return {static_cast<double>(answered) / elapsed, quantile(latency, 0.5)};
}

}  // namespace weir::bench
