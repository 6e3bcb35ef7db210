#pragma once
// When a shard writer last acked a Buffered push: the io thread polls its
// sockets for a short while after one (runtime/io_thread_loop.hpp), because a
// Buffered producer's next frame tends to follow its ack within tens of
// microseconds. One relaxed store per write group that held a Buffered
// push; any thread may read it.
#include <atomic>
#include <chrono>
#include <cstdint>

namespace weir {

class buffered_activity {
 public:
  using clock = std::chrono::steady_clock;

  void note_ack(clock::time_point at = clock::now()) noexcept {
    last_ack_ns_.store(at.time_since_epoch().count(), std::memory_order_relaxed);
  }

  /// Whether a Buffered push was acked within `window` before `now`.
  bool acked_within(std::chrono::nanoseconds window, clock::time_point now = clock::now()) const noexcept {
    const auto last = last_ack_ns_.load(std::memory_order_relaxed);
    return last != 0 && now.time_since_epoch().count() - last < clock::duration(window).count();
  }

 private:
  std::atomic<clock::rep> last_ack_ns_{0};  // steady_clock ticks; 0: none yet
};

}  // namespace weir
