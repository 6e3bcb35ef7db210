#pragma once
// Live bytes in the WAB across all shards, against limits.wab_max_bytes.
// Writers add what they append, the drain subtracts what it deletes. Over the
// cap new records are refused; intake resumes only below 90 % of it, so the
// daemon does not flap at the boundary.
#include <atomic>
#include <cstdint>

namespace weir::wab {

class wab_usage {
 public:
  explicit wab_usage(std::uint64_t cap_bytes) : cap_(cap_bytes), resume_(cap_bytes / 10 * 9) {}

  /// Bytes written, or found at start: over the cap, readiness says so at
  /// once, not only once a push is refused.
  void add(std::uint64_t n) { update(bytes_.fetch_add(n, std::memory_order_relaxed) + n); }
  /// Space freed (a delivered segment deleted): readiness must come back
  /// without waiting for a producer to try.
  void remove(std::uint64_t n) {
    // Never below zero: a count that wrapped would stop intake for good.
    std::uint64_t now = bytes_.load(std::memory_order_relaxed), left = 0;
    do left = now > n ? now - n : 0;
    while (!bytes_.compare_exchange_weak(now, left, std::memory_order_relaxed));
    update(left);
  }

  /// Whether `records` new records (one push, or one batch) may be taken;
  /// counts them as rejected when not.
  bool admit(std::uint64_t records) {
    const bool over = update(bytes_.load(std::memory_order_relaxed));
    if (over) rejections_.fetch_add(records, std::memory_order_relaxed);
    return !over;
  }

  std::uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  std::uint64_t cap() const { return cap_; }
  bool over_cap() const { return over_.load(std::memory_order_relaxed); }
  std::uint64_t rejections() const { return rejections_.load(std::memory_order_relaxed); }

 private:
  /// Applies the hysteresis to `now` bytes; whether intake is stopped.
  bool update(std::uint64_t now) {
    bool over = over_.load(std::memory_order_relaxed);
    if (over && now < resume_) over_.store(over = false, std::memory_order_relaxed);
    else if (!over && now >= cap_) over_.store(over = true, std::memory_order_relaxed);
    return over;
  }

  const std::uint64_t cap_, resume_;
  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<bool> over_{false};
  std::atomic<std::uint64_t> rejections_{0};
};

}  // namespace weir::wab
