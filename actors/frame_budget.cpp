#include "actors/frame_budget.hpp"

#include <algorithm>

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

/// Whether a share held `age_ns` has received less than the share of its
/// payload that `age_ns` is of the read timeout: at that pace it would not
/// be whole before the timeout closes its connection.
bool behind_its_timeout(const frame_hold& h, std::uint64_t received, std::int64_t age_ns, std::int64_t timeout_ns) {
  if (timeout_ns <= 0) return false;
  using wide = unsigned __int128;  // 16 MiB times an hour in ns overflows 64 bits
  return wide{received} * static_cast<std::uint64_t>(timeout_ns) < wide{h.bytes} * static_cast<std::uint64_t>(age_ns);
}

}  // namespace

void frame_budget::reclaim_stalled(std::uint64_t n, std::uint64_t ticket, const reclaim_rule& rule) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (waiting_.empty() || *waiting_.begin() != ticket) return;
  forget_finished_holds();
  const std::uint64_t used = used_.load(std::memory_order_relaxed);
  std::uint64_t available = used < capacity_ ? capacity_ - used : 0;
  // Stamps move while this runs: ordered on values read once. Stalled
  // shares first, the longest quiet first; then slow ones, the least received first.
  struct candidate {
    bool stalled;
    std::int64_t quiet_since;  // stalled: its last bytes
    double share;              // slow: the part of its payload received
    std::shared_ptr<frame_hold> hold;
  };
  std::vector<candidate> doomed;
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
    const std::int64_t age = rule.now_ns - h->granted_ns;
    if (stamp < rule.now_ns - rule.stall_ns)
      doomed.push_back({true, stamp, 0, std::move(h)});
    else if (age >= rule.stall_ns && behind_its_timeout(*h, received, age, rule.read_timeout_ns))
      doomed.push_back({false, 0, static_cast<double>(received) / static_cast<double>(h->bytes), std::move(h)});
  }
  std::sort(doomed.begin(), doomed.end(), [](const candidate& a, const candidate& b) {
    if (a.stalled != b.stalled) return a.stalled;
    return a.stalled ? a.quiet_since < b.quiet_since : a.share < b.share;
  });
  for (auto& c : doomed) {
    if (available >= n) break;
    auto io = c.hold->io.lock();
    if (!io || io->unread_input()) continue;
    c.hold->reclaimed = true;
    available += c.hold->bytes;
    reclaims_.fetch_add(1, std::memory_order_relaxed);
    io->abort();
  }
}

}  // namespace weir
