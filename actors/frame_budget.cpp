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

namespace {

/// Whether a share held `age_ns` is hopelessly slow: held for a sixth of
/// the read timeout at least (and the stall time), long past a TCP slow
/// start, it has received less than an eighth of what a steady pace that
/// ends with the timeout would have brought by now. Meant for peers that
/// send next to nothing: an honest producer sharing a slow link with others
/// can fall to half the steady pace for a while and still finish in time.
bool hopelessly_slow(const frame_hold& h, std::uint64_t received, std::int64_t age_ns,
                     const frame_budget::reclaim_rule& rule) {
  if (rule.read_timeout_ns <= 0 || age_ns < std::max(rule.stall_ns, rule.read_timeout_ns / 6)) return false;
  using wide = unsigned __int128;  // 16 MiB times an hour in ns overflows 64 bits
  return wide{received} * static_cast<std::uint64_t>(rule.read_timeout_ns) * 8 <
         wide{h.bytes} * static_cast<std::uint64_t>(age_ns);
}

/// Whether a share quiet for `quiet_ns` may be waiting on its transport:
/// TCP resends a lost packet a retransmission timeout later.
bool recovering_a_loss(const frame_hold& h, std::int64_t quiet_ns) {
  const auto io = h.io.lock();
  return io && quiet_ns < io->loss_recovery_time().count();
}

/// A share's connection, unless bytes of its peer wait unread: then the
/// daemon is behind, not the peer — but not when the daemon stopped
/// reading because that peer does not read its replies.
std::shared_ptr<connection_io> peer_to_blame(const frame_hold& h) {
  auto io = h.io.lock();
  if (io && io->unread_input() && !io->write_blocked()) return nullptr;
  return io;
}

}  // namespace

void frame_budget::reclaim_stalled(std::uint64_t n, std::uint64_t ticket, const reclaim_rule& rule) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (waiting_.empty() || *waiting_.begin() != ticket) return;
  forget_finished_holds();
  const std::uint64_t used = used_.load(std::memory_order_relaxed);
  std::uint64_t available = used < capacity_ ? capacity_ - used : 0;
  // Stamps move while this runs: ordered on values read once.
  std::vector<std::pair<std::int64_t, std::shared_ptr<frame_hold>>> stalled;  // by last bytes
  std::vector<std::pair<double, std::shared_ptr<frame_hold>>> slow;          // by the part received
  for (const auto& weak : holds_) {
    auto h = weak.lock();
    if (!h) continue;
    // Closed already and not yet gone: its share is on its way back.
    if (h->reclaimed) {
      available += h->bytes;
      continue;
    }
    const std::int64_t stamp = h->last_bytes_ns.load(std::memory_order_relaxed);
    const std::uint64_t received = h->received.load(std::memory_order_relaxed);
    if (stamp < rule.now_ns - rule.stall_ns && !recovering_a_loss(*h, rule.now_ns - stamp))
      stalled.emplace_back(stamp, std::move(h));
    else if (hopelessly_slow(*h, received, rule.now_ns - h->granted_ns, rule))
      slow.emplace_back(static_cast<double>(received) / static_cast<double>(h->bytes), std::move(h));
  }
  // A stalled peer goes whether or not that is enough: it does nothing with the memory.
  std::sort(stalled.begin(), stalled.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [stamp, h] : stalled) {
    if (available >= n) return;
    if (auto io = peer_to_blame(*h)) {
      available += h->bytes;
      take_back(*h, *io, "stalled", rule.now_ns);
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
    take_back(*h, *io, "too_slow", rule.now_ns);
  }
}

void frame_budget::take_back(frame_hold& h, connection_io& io, const char* why, std::int64_t now_ns) {
  h.reclaimed = true;
  reclaims_.fetch_add(1, std::memory_order_relaxed);
  io.abort();
  const std::uint64_t closed = lines_.admit(now_ns);
  if (closed == 0) return;
  log::warn("frame memory taken back for a connection that waits: a frame's connection closed",
            {{"why", why},
             {"payload_bytes", std::to_string(h.bytes)},
             {"received_bytes", std::to_string(h.received.load(std::memory_order_relaxed))},
             {"held_ms", std::to_string((now_ns - h.granted_ns) / 1000000)},
             {"closed_since_last_line", std::to_string(closed)}});
}

}  // namespace weir
