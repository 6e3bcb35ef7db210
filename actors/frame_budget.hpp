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
// come hopelessly slowly: held for a sixth of the read timeout, at its pace
// of the last seconds it would need more than ten times the time it has
// left (a peer trickling a byte at a time must not keep the memory until
// its timeout; the margins spare a TCP slow start and a producer that lost
// the race for a link shared with others). Over TCP a quiet spell is no
// stall while the connection may be recovering a lost packet (three times
// its retransmission timeout or receive round trip, at most the same sixth). Waiting frames keep their own read timeout, so a waiter gone
// quiet goes too.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "messages/connection_protocol.hpp"
#include "observability/log_throttle.hpp"
#include "observability/metrics.hpp"

namespace weir {

/// When a share is taken back, on the clock of the frame_hold stamps.
struct reclaim_rule {
  std::int64_t now_ns;
  std::int64_t stall_ns;         // no bytes this long: stalled
  std::int64_t read_timeout_ns;  // listen.read_timeout_ms: the time a frame has
  /// A share is judged on its pace once held this long; a transport's loss
  /// recovery excuses a quiet spell up to this long.
  std::int64_t grace_ns() const { return std::max(stall_ns, read_timeout_ns / 6); }
};

/// A share whose payload is still being read: the one that may be taken
/// back. The holder notes bytes as they arrive, on its own clock; the pace
/// is taken over the last one to two windows (half the grace each).
class frame_hold {
 public:
  struct progress {
    std::int64_t last_bytes_ns;
    std::uint64_t received;     // bytes from the peer since the grant, and those before it
    std::int64_t since_ns;      // the pace is (received - received_since) / (now - since_ns)
    std::uint64_t received_since;
  };
  /// `already`: the payload's bytes that had arrived when the share was granted.
  frame_hold(std::uint64_t n, std::int64_t now_ns, std::uint64_t already, std::weak_ptr<connection_io> socket,
             const reclaim_rule& rule)
      : bytes(n), granted_ns(now_ns), io(std::move(socket)), window_ns_(rule.grace_ns() / 2),
        now_{now_ns, already, now_ns, already}, window_{now_ns, already} {}
  /// Notes `n` more bytes from the peer at `now_ns`.
  void arrived(std::uint64_t n, std::int64_t now_ns);
  progress read() const;

  const std::uint64_t bytes;
  const std::int64_t granted_ns;
  const std::weak_ptr<connection_io> io;  // the holder's socket: closed to take the share back
  bool reclaimed = false;                 // under the budget's mutex

 private:
  struct sample {
    std::int64_t ns;
    std::uint64_t received;
  };
  const std::int64_t window_ns_;
  mutable std::mutex mutex_;
  progress now_;   // since_ns/received_since: the start of the previous window
  sample window_;  // the start of the current window
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
  /// For the head of the line, which needs `n`: closes (at once, queued
  /// replies dropped) the connections whose shares are stalled, the longest
  /// stalled first, then those hopelessly slow (above), the furthest behind
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
  void take_back(frame_hold& h, connection_io& io, log_throttle& lines, std::string_view why,
                 std::initializer_list<std::pair<std::string_view, std::string>> detail, std::int64_t now_ns);

  const std::uint64_t capacity_;
  std::atomic<std::uint64_t> used_{0};
  std::atomic<std::uint64_t> waits_{0};
  std::atomic<std::uint64_t> reclaims_{0};
  std::mutex mutex_;
  std::uint64_t next_ticket_ = 1;
  std::set<std::uint64_t> waiting_;
  std::vector<std::weak_ptr<frame_hold>> holds_;
  log_throttle stalled_lines_, slow_lines_;  // on the holds' clock
};

}  // namespace weir
