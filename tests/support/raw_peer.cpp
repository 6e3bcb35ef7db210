#include "support/raw_peer.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace weir::test {

raw_peer::raw_peer(const std::string& socket_path) {
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    fd_ = -1;
    return;
  }
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
}

raw_peer::~raw_peer() {
  if (fd_ >= 0) ::close(fd_);
}

long raw_peer::send_some(const std::uint8_t* data, std::size_t n) {
  if (fd_ < 0) return -1;
  const ssize_t sent = ::send(fd_, data, n, MSG_NOSIGNAL);
  if (sent >= 0) return static_cast<long>(sent);
  if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
  return -1;
}

std::size_t raw_peer::send_until_stalled(const std::vector<std::uint8_t>& data, std::size_t offset,
                                         std::chrono::milliseconds stall) {
  auto last_progress = std::chrono::steady_clock::now();
  while (offset < data.size()) {
    const long n = send_some(data.data() + offset, data.size() - offset);
    if (n < 0) break;
    if (n > 0) {
      offset += static_cast<std::size_t>(n);
      last_progress = std::chrono::steady_clock::now();
      continue;
    }
    if (std::chrono::steady_clock::now() - last_progress >= stall) break;
    pollfd p{fd_, POLLOUT, 0};
    ::poll(&p, 1, 10);
  }
  return offset;
}

bool raw_peer::closed_by_daemon() {
  if (fd_ < 0) return true;
  std::uint8_t buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0) return true;
    if (n < 0) return !(errno == EAGAIN || errno == EWOULDBLOCK);
  }
}

bool raw_peer::wait_closed(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (closed_by_daemon()) return true;
    pollfd p{fd_, POLLIN, 0};
    ::poll(&p, 1, 20);
  }
  return closed_by_daemon();
}

std::uint64_t resident_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

std::chrono::milliseconds cpu_time(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the command name, which is in parentheses and may hold spaces.
  std::istringstream rest(all.substr(all.rfind(')') + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  const long ticks = ::sysconf(_SC_CLK_TCK);
  return std::chrono::milliseconds((utime + stime) * 1000 / static_cast<unsigned long long>(ticks));
}

bool set_open_file_limit(pid_t pid, std::uint64_t soft) {
  rlimit now{};
  if (::prlimit(pid, RLIMIT_NOFILE, nullptr, &now) != 0) return false;
  rlimit lim{static_cast<rlim_t>(soft), now.rlim_max};
  return ::prlimit(pid, RLIMIT_NOFILE, &lim, nullptr) == 0;
}

std::size_t open_files(pid_t pid) {
  std::size_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++n;
  return n;
}

int tcp_connect(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return fd;
}

void tcp_send(int fd, const std::string& bytes) {
  if (fd >= 0) (void)!::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
}

void tcp_close(int fd) {
  if (fd >= 0) ::close(fd);
}

}  // namespace weir::test
