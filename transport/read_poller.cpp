#include "transport/read_poller.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace weir {

namespace {

int make_epoll_set() {
  const int fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (fd < 0) throw std::runtime_error(std::string("cannot create an epoll set: ") + std::strerror(errno));
  return fd;
}

}  // namespace

read_poller::read_poller(boost::asio::io_context& io, bool always)
    : set_(io, make_epoll_set()), ticker_(io), always_(always) {
  stats_.batching = always;
}

read_poller::~read_poller() {
  boost::system::error_code ignored;
  set_.close(ignored);
}

void read_poller::start() {
  std::lock_guard<std::mutex> guard(mutex_);
  wait();
  if (!always_) tick();
}

/// Counts the connections that read since the last tick, and so how
/// sessions read until the next one. With mutex_ held: the timer is armed
/// and cancelled under it, so a stop() cannot slip between a tick and its
/// next arming.
void read_poller::tick() {
  const std::uint32_t active = reading_.take();
  const bool was = batching(), now = next_batching(was, active);
  if (now != was) {
    stats_.batching.store(now, std::memory_order_relaxed);
    (now ? stats_.to_set : stats_.to_reactor).fetch_add(1, std::memory_order_relaxed);
  }
  ticker_.expires_after(std::chrono::milliseconds(100));
  ticker_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    std::lock_guard<std::mutex> guard(mutex_);
    if (!stopped_) tick();
  });
}

/// Under mutex_, as every arming is: no wait or tick is armed after this.
void read_poller::stop() {
  std::lock_guard<std::mutex> guard(mutex_);
  stopped_ = true;
  boost::system::error_code ignored;
  set_.cancel(ignored);
  ticker_.cancel();
}

bool read_poller::watch(int fd, std::weak_ptr<readable_target> target) {
  std::lock_guard<std::mutex> guard(mutex_);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (::epoll_ctl(set_.native_handle(), EPOLL_CTL_ADD, fd, &ev) != 0) return false;
  targets_[fd] = std::move(target);
  return true;
}

void read_poller::unwatch(int fd) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (targets_.erase(fd) == 0) return;
  ::epoll_ctl(set_.native_handle(), EPOLL_CTL_DEL, fd, nullptr);
}

// With mutex_ held.
void read_poller::wait() {
  set_.async_wait(boost::asio::posix::descriptor_base::wait_read, [this](const boost::system::error_code& ec) {
    if (ec) return;  // cancelled: stopping
    on_ready();
  });
}

/// Every socket ready now, each told once. The wait is armed again only
/// after the targets ran (and, on this thread, read): armed before, the set
/// would still be ready with their unread bytes, and a second io thread
/// would wake for the same sockets and read them again for nothing.
void read_poller::on_ready() {
  std::array<epoll_event, 256> events;
  const int n = ::epoll_wait(set_.native_handle(), events.data(), static_cast<int>(events.size()), 0);
  stats_.wakeups.fetch_add(1, std::memory_order_relaxed);
  if (n > 0) stats_.ready.fetch_add(static_cast<std::uint64_t>(n), std::memory_order_relaxed);
  std::vector<std::shared_ptr<readable_target>> ready;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (stopped_) return;
    for (int i = 0; i < n; ++i) {
      const int fd = events[static_cast<std::size_t>(i)].data.fd;
      auto it = targets_.find(fd);
      if (it == targets_.end()) continue;
      if (auto t = it->second.lock()) {
        ready.push_back(std::move(t));
      } else {
        // Its session is gone without unwatching: never report it again.
        targets_.erase(it);
        ::epoll_ctl(set_.native_handle(), EPOLL_CTL_DEL, fd, nullptr);
      }
    }
  }
  for (auto& t : ready) t->on_readable();
  std::lock_guard<std::mutex> guard(mutex_);
  if (!stopped_) wait();
}

}  // namespace weir
