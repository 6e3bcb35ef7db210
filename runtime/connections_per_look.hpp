#pragma once
// Counts the connections that did something between two looks, each once
// however often it did it: a relaxed load per event, and an atomic add once
// per connection per look. Each connection keeps its own marker.
#include <atomic>
#include <cstdint>

namespace weir {

class connections_per_look {
 public:
  /// A connection acted; `seen` is its own marker (starts at 0, touched by
  /// that connection only).
  void note(std::uint32_t& seen) noexcept {
    const auto now = look_.load(std::memory_order_relaxed);
    if (seen != now) {
      seen = now;
      active_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  /// The connections that acted since the last call (one that acted just
  /// as the call happened may count twice in the next).
  std::uint32_t take() noexcept {
    look_.fetch_add(1, std::memory_order_relaxed);
    return active_.exchange(0, std::memory_order_relaxed);
  }

 private:
  std::atomic<std::uint32_t> look_{1};
  std::atomic<std::uint32_t> active_{0};
};

}  // namespace weir
