#include "actors/frame_budget.hpp"

#include <algorithm>
#include <string>

#include "observability/log.hpp"

namespace weir {

bool frame_budget::try_acquire(std::uint64_t n, std::uint64_t ticket) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (!waiting_.empty() && *waiting_.begin() != ticket) return false;
  // Releases need no lock: the memory only grows freer under it.
  std::uint64_t used = used_.load(std::memory_order_relaxed);
  do {
    if (used + n > capacity_) return false;
  } while (!used_.compare_exchange_weak(used, used + n, std::memory_order_relaxed));
  waiting_.erase(ticket);
  return true;
}

std::uint64_t frame_budget::wait() {
  std::lock_guard<std::mutex> guard(mutex_);
  waits_.fetch_add(1, std::memory_order_relaxed);
  const std::uint64_t ticket = next_ticket_++;
  waiting_.insert(ticket);
  return ticket;
}

void frame_budget::leave(std::uint64_t ticket) {
  std::lock_guard<std::mutex> guard(mutex_);
  waiting_.erase(ticket);
}

void frame_budget::track(const std::shared_ptr<frame_hold>& hold) {
  std::lock_guard<std::mutex> guard(mutex_);
  forget_finished_holds();
  holds_.push_back(hold);
}

void frame_budget::forget_finished_holds() {
  std::erase_if(holds_, [](const std::weak_ptr<frame_hold>& h) { return h.expired(); });
}

void frame_hold::arrived(std::uint64_t n, std::int64_t now_ns) {
  std::lock_guard<std::mutex> guard(mutex_);
  now_.received += n;
  now_.last_bytes_ns = now_ns;
  if (now_ns - window_.ns >= window_ns_) {
    now_.since_ns = window_.ns;
    now_.received_since = window_.received;
    window_ = {now_ns, now_.received};
  }
}

frame_hold::progress frame_hold::read() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return now_;
}

namespace {

using wide = unsigned __int128;  // 16 MiB times an hour in ns overflows 64 bits

/// How long the share's transport may stay quiet recovering a lost packet:
/// what it says, at most the grace (a peer can make its round trips look long).
std::int64_t loss_recovery_ns(const frame_hold& h, const reclaim_rule& rule) {
  const auto io = h.io.lock();
  return io ? std::min(io->loss_recovery_time().count(), rule.grace_ns()) : 0;
}

/// Whether a share is hopelessly slow: held for the grace at least (long
/// past a TCP slow start), at its pace since `p.since_ns` it would need more
/// than ten times what is left of its read timeout for the rest. Meant for
/// peers that send next to nothing. A producer that lost the race for a
/// link shared with others can run at a sixth of the steady pace for a
/// while and still finish once they are done; a peer pacing itself that
/// low is not told from it, and keeps its share until its read timeout.
bool hopelessly_slow(const frame_hold& h, const frame_hold::progress& p, const reclaim_rule& rule) {
  const std::int64_t age = rule.now_ns - h.granted_ns;
  if (rule.read_timeout_ns <= 0 || age < rule.grace_ns()) return false;
  const std::int64_t left = rule.read_timeout_ns - age;
  if (left <= 0) return true;  // its timeout closes it any moment
  const std::uint64_t remaining = h.bytes - std::min(h.bytes, p.received);
  const std::uint64_t recent = p.received - p.received_since;
  const auto span = static_cast<std::uint64_t>(std::max<std::int64_t>(1, rule.now_ns - p.since_ns));
  // remaining / (recent / span) > 10 * left
  return wide{remaining} * span > wide{recent} * 10 * static_cast<std::uint64_t>(left);
}

/// A share's connection, unless bytes of its peer wait unread: then the
/// daemon is behind, not the peer — but not when the daemon stopped
/// reading because that peer does not read its replies.
std::shared_ptr<connection_io> peer_to_blame(const frame_hold& h) {
  auto io = h.io.lock();
  if (io && io->unread_input() && !io->write_blocked()) return nullptr;
  return io;
}

std::string ms(std::int64_t ns) { return std::to_string(ns / 1000000); }

}  // namespace

void frame_budget::reclaim_stalled(std::uint64_t n, std::uint64_t ticket, const reclaim_rule& rule) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (waiting_.empty() || *waiting_.begin() != ticket) return;
  forget_finished_holds();
  const std::uint64_t used = used_.load(std::memory_order_relaxed);
  std::uint64_t available = used < capacity_ ? capacity_ - used : 0;
  // Stamps move while this runs: ordered on values read once.
  struct quiet_share {
    std::int64_t last_bytes_ns, allowed_ns;
    std::shared_ptr<frame_hold> hold;
  };
  std::vector<quiet_share> stalled;                                  // by last bytes
  std::vector<std::pair<double, std::shared_ptr<frame_hold>>> slow;  // by the part received
  for (const auto& weak : holds_) {
    auto h = weak.lock();
    if (!h) continue;
    // Closed already and not yet gone: its share is on its way back.
    if (h->reclaimed) {
      available += h->bytes;
      continue;
    }
    const auto p = h->read();
    const std::int64_t quiet = rule.now_ns - p.last_bytes_ns;
    if (quiet > rule.stall_ns) {
      // Asked of the quiet ones only: a system call each.
      const std::int64_t allowed = std::max(rule.stall_ns, loss_recovery_ns(*h, rule));
      if (quiet > allowed) {
        stalled.push_back({p.last_bytes_ns, allowed, std::move(h)});
        continue;
      }
    }
    if (hopelessly_slow(*h, p, rule))
      slow.emplace_back(static_cast<double>(p.received) / static_cast<double>(h->bytes), std::move(h));
  }
  // A stalled peer goes whether or not that is enough: it does nothing with the memory.
  std::sort(stalled.begin(), stalled.end(),
            [](const quiet_share& a, const quiet_share& b) { return a.last_bytes_ns < b.last_bytes_ns; });
  for (auto& q : stalled) {
    if (available >= n) return;
    if (auto io = peer_to_blame(*q.hold)) {
      available += q.hold->bytes;
      take_back(*q.hold, *io, stalled_lines_, "stalled",
                {{"quiet_ms", ms(rule.now_ns - q.last_bytes_ns)}, {"quiet_allowed_ms", ms(q.allowed_ns)}}, rule.now_ns);
    }
  }
  // A slow one still makes progress: it goes only if the slow ones together make room.
  std::vector<std::pair<frame_hold*, std::shared_ptr<connection_io>>> blamed;
  std::uint64_t could_free = 0;
  std::sort(slow.begin(), slow.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [share, h] : slow)
    if (auto io = peer_to_blame(*h)) {
      could_free += h->bytes;
      blamed.emplace_back(h.get(), std::move(io));
    }
  if (available + could_free < n) return;
  for (auto& [h, io] : blamed) {
    if (available >= n) return;
    available += h->bytes;
    take_back(*h, *io, slow_lines_, "too_slow", {{"read_timeout_ms", ms(rule.read_timeout_ns)}}, rule.now_ns);
  }
}

void frame_budget::take_back(frame_hold& h, connection_io& io, log_throttle& lines, std::string_view why,
                             std::initializer_list<std::pair<std::string_view, std::string>> detail,
                             std::int64_t now_ns) {
  h.reclaimed = true;
  reclaims_.fetch_add(1, std::memory_order_relaxed);
  io.abort();
  const std::uint64_t closed = lines.admit(now_ns);
  if (closed == 0) return;
  const auto p = h.read();
  std::vector<std::pair<std::string, std::string>> fields{{"why", std::string(why)},
                                 {"payload_bytes", std::to_string(h.bytes)},
                                 {"received_bytes", std::to_string(p.received)},
                                 {"held_ms", ms(now_ns - h.granted_ns)}};
  for (const auto& [key, value] : detail) fields.push_back({std::string(key), value});
  fields.push_back({"closed_since_last_line", std::to_string(closed)});
  log::write(log_level::warn, "frame memory taken back for a connection that waits: a frame's connection closed", fields);
}

}  // namespace weir
