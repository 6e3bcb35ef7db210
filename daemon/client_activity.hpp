#pragma once
// What every socket session tells the daemon when client bytes arrive: the
// keep-awake spinners (runtime.keep_awake_us), and how many connections sent
// any since the CPU placement controller last looked (runtime.cpu_placement).
// Called on every read: a relaxed load, and an atomic add once per
// connection per look.
#include <atomic>
#include <cstdint>

#include "daemon/cpu_keep_awake.hpp"

namespace weir {

class client_activity {
 public:
  explicit client_activity(cpu_keep_awake* keep_awake = nullptr) : keep_awake_(keep_awake) {}

  /// Client bytes arrived on a connection; `seen` is that connection's own
  /// marker (starts at 0, touched by its reads only).
  void note(std::uint32_t& seen) noexcept {
    if (keep_awake_) keep_awake_->note_activity();
    const auto now = look_.load(std::memory_order_relaxed);
    if (seen != now) {
      seen = now;
      active_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  /// The connections that sent bytes since the last call (one that read
  /// just as the call happened may count twice in the next).
  std::uint32_t take_active_connections() noexcept {
    look_.fetch_add(1, std::memory_order_relaxed);
    return active_.exchange(0, std::memory_order_relaxed);
  }

 private:
  cpu_keep_awake* const keep_awake_;
  std::atomic<std::uint32_t> look_{1};
  std::atomic<std::uint32_t> active_{0};
};

}  // namespace weir
