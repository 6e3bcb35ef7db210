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

void frame_budget::reclaim_stalled(std::uint64_t n, std::uint64_t ticket, std::int64_t stalled_before_ns) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (waiting_.empty() || *waiting_.begin() != ticket) return;
  forget_finished_holds();
  const std::uint64_t used = used_.load(std::memory_order_relaxed);
  std::uint64_t available = used < capacity_ ? capacity_ - used : 0;
  // Stamps move while this runs: sorted on a copy taken once.
  std::vector<std::pair<std::int64_t, std::shared_ptr<frame_hold>>> stalled;
  for (const auto& weak : holds_) {
    auto h = weak.lock();
    if (!h) continue;
    const std::int64_t stamp = h->last_bytes_ns.load(std::memory_order_relaxed);
    // Closed already and not yet gone: its share is on its way back.
    if (h->reclaimed) available += h->bytes;
    else if (stamp < stalled_before_ns) stalled.emplace_back(stamp, std::move(h));
  }
  std::sort(stalled.begin(), stalled.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [stamp, h] : stalled) {
    if (available >= n) break;
    auto io = h->io.lock();
    if (!io || io->unread_input()) continue;
    h->reclaimed = true;
    available += h->bytes;
    reclaims_.fetch_add(1, std::memory_order_relaxed);
    io->abort();
  }
}

}  // namespace weir
