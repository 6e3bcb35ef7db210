#pragma once
// The memory all connections may hold together for large frame payloads,
// from the moment a header announces one until its reply is written:
// limits.frame_memory_bytes. A connection that cannot have its share waits
// (reading nothing more) and retries; one that stalls past
// listen.read_timeout_ms meanwhile is closed, which gives its share back.
#include <atomic>
#include <cstdint>

#include "observability/metrics.hpp"

namespace weir {

class frame_budget final : public shared_memory_gauge {
 public:
  explicit frame_budget(std::uint64_t bytes) : capacity_(bytes) {}

  bool try_acquire(std::uint64_t n) {
    std::uint64_t used = used_.load(std::memory_order_relaxed);
    do {
      if (used + n > capacity_) {
        waits_.fetch_add(1, std::memory_order_relaxed);
        return false;
      }
    } while (!used_.compare_exchange_weak(used, used + n, std::memory_order_relaxed));
    return true;
  }
  void release(std::uint64_t n) { used_.fetch_sub(n, std::memory_order_relaxed); }

  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t in_use() const override { return used_.load(std::memory_order_relaxed); }
  /// Times a connection found the budget spent and had to wait.
  std::uint64_t waits() const override { return waits_.load(std::memory_order_relaxed); }

 private:
  const std::uint64_t capacity_;
  std::atomic<std::uint64_t> used_{0};
  std::atomic<std::uint64_t> waits_{0};
};

}  // namespace weir
