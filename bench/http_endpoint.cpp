#include "bench/http_endpoint.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <list>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "bench/http_text.hpp"

namespace weir::bench {

namespace {

using clock = std::chrono::steady_clock;

bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

struct http_endpoint::impl {
  /// One connection's thread; reaped (joined, closed) once it has ended, so
  /// a sink reconnecting after every 503 does not pile up threads.
  struct connection {
    int fd = -1;
    std::thread thread;
    std::atomic<bool> done{false};
  };

  std::chrono::microseconds delay;
  bool no_delay;
  int listen_fd = -1;
  std::uint16_t port = 0;
  std::thread acceptor;
  mutable std::mutex mutex;
  std::list<connection> connections;
  std::vector<double> latencies_us;
  std::atomic<clock::rep> refuse_until{0};
  std::atomic<std::uint64_t> accepted{0}, refused{0};
  std::atomic<bool> stopping{false};

  impl(std::chrono::microseconds d, bool nd) : delay(d), no_delay(nd) {
    listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (listen_fd < 0 || ::bind(listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd, 256) != 0 || ::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      throw std::runtime_error(std::string("bench HTTP endpoint: cannot listen: ") + std::strerror(errno));
    port = ntohs(addr.sin_port);
    acceptor = std::thread([this] { accept_loop(); });
  }

  ~impl() {
    stopping = true;
    ::shutdown(listen_fd, SHUT_RDWR);
    acceptor.join();
    {
      std::lock_guard<std::mutex> guard(mutex);
      for (auto& c : connections) ::shutdown(c.fd, SHUT_RDWR);
    }
    for (auto& c : connections) {
      c.thread.join();
      ::close(c.fd);
    }
    ::close(listen_fd);
  }

  void reap_finished() {
    std::lock_guard<std::mutex> guard(mutex);
    for (auto it = connections.begin(); it != connections.end();) {
      if (!it->done) {
        ++it;
        continue;
      }
      it->thread.join();
      ::close(it->fd);
      it = connections.erase(it);
    }
  }

  void accept_loop() {
    for (;;) {
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (stopping) {
        if (fd >= 0) ::close(fd);
        return;
      }
      if (fd < 0) {
        if (errno != EINTR && errno != ECONNABORTED)  // out of fds or memory: the sink retries, so must we
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      // Without it the answer to the second of two pipelined requests
      // waits for the sink to ACK the first answer: up to the 40 ms of a
      // delayed ACK, and every record queued behind it waits too.
      const int one = 1;
      if (no_delay) ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      reap_finished();
      std::lock_guard<std::mutex> guard(mutex);
      auto& c = connections.emplace_back();
      c.fd = fd;
      c.thread = std::thread([this, &c] {
        serve(c.fd);
        c.done = true;
      });
    }
  }

  /// Requests as they come, pipelined ones too, each answered in turn.
  void serve(int fd) {
    std::string in;
    char buf[64 * 1024];
    for (;;) {
      const auto head_end = in.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        const std::size_t body_at = head_end + 4;
        const std::size_t body_size = content_length(std::string_view(in).substr(0, body_at));
        if (in.size() >= body_at + body_size) {
          const auto arrived = clock::now();
          if (!answer(fd, std::string_view(in).substr(body_at, body_size), arrived)) break;
          in.erase(0, body_at + body_size);
          continue;
        }
      }
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      in.append(buf, static_cast<std::size_t>(n));
    }
    ::shutdown(fd, SHUT_RDWR);  // closed when reaped, so the fd is not reused under its thread
  }

  bool answer(int fd, std::string_view body, clock::time_point arrived) {
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    if (clock::now().time_since_epoch().count() < refuse_until.load()) {
      ++refused;
      return send_all(fd, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n");
    }
    const auto semicolon = body.find(';');
    if (semicolon != std::string_view::npos && semicolon > 0 && semicolon < 24) {
      const clock::rep sent = std::strtoll(std::string(body.substr(0, semicolon)).c_str(), nullptr, 10);
      if (sent > 0) {
        std::lock_guard<std::mutex> guard(mutex);
        latencies_us.push_back(static_cast<double>(arrived.time_since_epoch().count() - sent) / 1000.0);
      }
    }
    ++accepted;
    return send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  }
};

http_endpoint::http_endpoint(std::chrono::microseconds delay, bool no_delay)
    : impl_(std::make_unique<impl>(delay, no_delay)) {}
http_endpoint::~http_endpoint() = default;

std::string http_endpoint::url() const { return "http://127.0.0.1:" + std::to_string(impl_->port) + "/"; }

void http_endpoint::refuse_for(clock::duration span) {
  impl_->refuse_until = (clock::now() + span).time_since_epoch().count();
}

clock::time_point http_endpoint::refusing_until() const {
  return clock::time_point(clock::duration(impl_->refuse_until.load()));
}

std::uint64_t http_endpoint::accepted() const { return impl_->accepted; }
std::uint64_t http_endpoint::refused() const { return impl_->refused; }

std::vector<double> http_endpoint::stamped_latencies_us() const {
  std::lock_guard<std::mutex> guard(impl_->mutex);
  return impl_->latencies_us;
}

}  // namespace weir::bench
