#include "support/fake_daemon.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "wire/bytes.hpp"
#include "wire/frame.hpp"

namespace weir::test {

namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what + ": " + std::strerror(errno)); }

sockaddr_un unix_address(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) throw std::runtime_error("socket path too long: " + path);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

/// A Unix socket listening at `path` (the kernel queues `backlog` + 1 connections).
int listen_unix(const std::string& path, int backlog) {
  const sockaddr_un addr = unix_address(path);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("socket");
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, backlog) != 0) {
    ::close(fd);
    fail("cannot listen at " + path);
  }
  return fd;
}

}  // namespace

silent_unix_listener::silent_unix_listener(std::string path) : path_(std::move(path)), fd_(listen_unix(path_, 1)) {}

silent_unix_listener::~silent_unix_listener() {
  for (int fd : queued_) ::close(fd);
  ::close(fd_);
  ::unlink(path_.c_str());
}

void silent_unix_listener::fill_backlog() {
  // A non-blocking Unix connect never goes in progress: it is queued, or
  // refused with EAGAIN when the backlog is full, at once.
  const sockaddr_un addr = unix_address(path_);
  for (;;) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) fail("socket");
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
      queued_.push_back(fd);
      continue;
    }
    const int err = errno;
    ::close(fd);
    if (err == EAGAIN) return;
    errno = err;
    fail("cannot connect to " + path_);
  }
}

silent_tcp_listener::silent_tcp_listener() {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) fail("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 8) != 0 ||
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd_);
    fail("cannot listen on 127.0.0.1");
  }
  port_ = ntohs(addr.sin_port);
}

silent_tcp_listener::~silent_tcp_listener() { ::close(fd_); }

scripted_daemon::scripted_daemon(std::string path, std::vector<std::vector<std::uint8_t>> replies,
                                 std::size_t close_after)
    : path_(std::move(path)), replies_(std::move(replies)), close_after_(close_after), listen_fd_(listen_unix(path_, 8)) {
  if (::pipe2(stop_pipe_, O_CLOEXEC) != 0) fail("pipe");
  thread_ = std::thread([this] { serve(); });
}

scripted_daemon::~scripted_daemon() {
  const char stop = 1;
  (void)!::write(stop_pipe_[1], &stop, 1);
  if (thread_.joinable()) thread_.join();
  ::close(stop_pipe_[0]);
  ::close(stop_pipe_[1]);
  ::close(listen_fd_);
  ::unlink(path_.c_str());
}

std::size_t scripted_daemon::frames_read_until_closed() {
  if (thread_.joinable()) thread_.join();  // serve() ends at the connection's end
  return frames_read_.load();
}

bool scripted_daemon::wait_readable(int fd) {
  pollfd p[2] = {{fd, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
  while (::poll(p, 2, -1) < 0)
    if (errno != EINTR) return false;
  return (p[1].revents & POLLIN) == 0;
}

bool scripted_daemon::read_exact(int fd, std::uint8_t* out, std::size_t n) {
  for (std::size_t got = 0; got < n;) {
    if (!wait_readable(fd)) return false;
    const ssize_t r = ::recv(fd, out + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += static_cast<std::size_t>(r);
  }
  return true;
}

/// One frame as the client sends it: the header, then its declared payload and CRC.
bool scripted_daemon::skip_frame(int fd) {
  std::uint8_t header[wire::header_size];
  if (!read_exact(fd, header, sizeof header)) return false;
  std::vector<std::uint8_t> rest(load_le32(header + 8) + wire::payload_crc_size);
  return read_exact(fd, rest.data(), rest.size());
}

void scripted_daemon::serve() {
  if (!wait_readable(listen_fd_)) return;
  const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  const bool answer_late = close_after_ != SIZE_MAX;
  for (std::size_t next = 0; next < close_after_ && skip_frame(fd); ++next) {
    ++frames_read_;
    if (!answer_late && next < replies_.size()) ::send(fd, replies_[next].data(), replies_[next].size(), MSG_NOSIGNAL);
  }
  if (answer_late && frames_read_ == close_after_ && wait_readable(fd))
    for (std::size_t k = 0; k < std::min(close_after_, replies_.size()); ++k)
      ::send(fd, replies_[k].data(), replies_[k].size(), MSG_NOSIGNAL);
  ::close(fd);
}

}  // namespace weir::test
