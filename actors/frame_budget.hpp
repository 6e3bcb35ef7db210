#pragma once
// The memory all connections may hold together for large frame payloads,
// from the moment a header announces one until its reply is written:
// limits.frame_memory_bytes. A connection that cannot have its share waits
// in line (reading nothing more): the memory goes to waiters first come,
// first served, so newcomers cannot keep taking what an earlier one waits
// for. A share whose payload's bytes stopped coming for
// limits.frame_memory_stall_ms while someone waits is taken back: the
// connection at the head of the line closes that peer's connection (a
// header announcing 16 MiB and nothing after it cannot keep the memory from
// honest producers for the whole read timeout). So is a share whose bytes
// come hopelessly slowly: held for a sixth of the read timeout, it has less
// than an eighth of what a steady pace finishing with the timeout would
// have brought (a peer trickling a byte at a time must not keep the memory
// until its timeout; the margins spare a TCP slow start and a link shared
// with others). Waiting frames keep their own read timeout, so a waiter gone
// quiet goes too.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "messages/connection_protocol.hpp"
#include "observability/log_throttle.hpp"
#include "observability/metrics.hpp"

namespace weir {

/// A share whose payload is still being read: the one that may be taken
/// back. The holder stamps it as bytes arrive, on its own clock.
struct frame_hold {
  /// `already`: the payload's bytes that had arrived when the share was granted.
  frame_hold(std::uint64_t n, std::int64_t now_ns, std::uint64_t already, std::weak_ptr<connection_io> socket)
      : bytes(n), granted_ns(now_ns), last_bytes_ns(now_ns), received(already), io(std::move(socket)) {}
  /// Notes `n` more bytes from the peer at `now_ns`.
  void arrived(std::uint64_t n, std::int64_t now_ns) {
    received.fetch_add(n, std::memory_order_relaxed);
    last_bytes_ns.store(now_ns, std::memory_order_relaxed);
  }
  const std::uint64_t bytes;
  const std::int64_t granted_ns;
  std::atomic<std::int64_t> last_bytes_ns;
  std::atomic<std::uint64_t> received;  // bytes from the peer since the grant, and those before it
  const std::weak_ptr<connection_io> io;  // the holder's socket: closed to take the share back
  bool reclaimed = false;                 // under the budget's mutex
};

class frame_budget final : public shared_memory_gauge {
 public:
  explicit frame_budget(std::uint64_t bytes) : capacity_(bytes) {}

  /// `n` bytes, if they are free and nobody waits ahead of `ticket` (0: a
  /// connection not yet in line, which then gets one with wait()).
  bool try_acquire(std::uint64_t n, std::uint64_t ticket = 0);
  /// A place in line (counted as one wait).
  std::uint64_t wait();
  /// Out of line without the memory (the connection is going).
  void leave(std::uint64_t ticket);
  void release(std::uint64_t n) { used_.fetch_sub(n, std::memory_order_relaxed); }

  /// A share being read, from its acquisition until its frame is whole.
  void track(const std::shared_ptr<frame_hold>& hold);
  /// When a share is taken back, on the clock of the frame_hold stamps.
  struct reclaim_rule {
    std::int64_t now_ns;
    std::int64_t stall_ns;         // no bytes this long: stalled
    std::int64_t read_timeout_ns;  // listen.read_timeout_ms: the pace a share is judged by
  };
  /// For the head of the line, which needs `n`: closes (at once, queued
  /// replies dropped) the connections whose shares are stalled, the longest
  /// stalled first, then those hopelessly slow (above), the least received
  /// first and only if together they make room, until what is free and
  /// coming back covers `n`. A share whose peer's bytes wait unread is
  /// spared (the daemon is behind, not the peer), unless the daemon stopped
  /// reading because that peer does not read its replies. Nothing for a
  /// ticket not at the head.
  void reclaim_stalled(std::uint64_t n, std::uint64_t ticket, const reclaim_rule& rule);

  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t in_use() const override { return used_.load(std::memory_order_relaxed); }
  /// Times a connection found the budget spent (or others waiting) and waited.
  std::uint64_t waits() const override { return waits_.load(std::memory_order_relaxed); }
  /// Shares taken back from stalled or too slow peers.
  std::uint64_t reclaims() const override { return reclaims_.load(std::memory_order_relaxed); }

 private:
  /// With mutex_ held: live holds only.
  void forget_finished_holds();
  /// With mutex_ held: closes `h`'s connection; says so at most every 10 s.
  void take_back(frame_hold& h, connection_io& io, const char* why, std::int64_t now_ns);

  const std::uint64_t capacity_;
  std::atomic<std::uint64_t> used_{0};
  std::atomic<std::uint64_t> waits_{0};
  std::atomic<std::uint64_t> reclaims_{0};
  std::mutex mutex_;
  std::uint64_t next_ticket_ = 1;
  std::set<std::uint64_t> waiting_;
  std::vector<std::weak_ptr<frame_hold>> holds_;
  log_throttle lines_;  // on the holds' clock
};

}  // namespace weir
