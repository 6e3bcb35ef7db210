#pragma once
// What every socket session tells the daemon when client bytes arrive: the
// keep-awake spinners (runtime.keep_awake_us), and how many connections sent
// any since the CPU placement controller last looked (runtime.cpu_placement).
// Called on every read: a relaxed load, and an atomic add once per
// connection per look.
#include <atomic>
#include <cstdint>

#include "runtime/connections_per_look.hpp"
#include "runtime/cpu_keep_awake.hpp"

namespace weir {

class client_activity {
 public:
  explicit client_activity(cpu_keep_awake* keep_awake = nullptr) : keep_awake_(keep_awake) {}

  /// Client bytes arrived on a connection; `seen` is that connection's own
  /// marker (starts at 0, touched by its reads only).
  void note(std::uint32_t& seen) noexcept {
    if (keep_awake_) keep_awake_->note_activity();
    sending_.note(seen);
  }

  /// The connections that sent bytes since the last call (one that read
  /// just as the call happened may count twice in the next).
  std::uint32_t take_active_connections() noexcept { return sending_.take(); }

 private:
  cpu_keep_awake* const keep_awake_;
  connections_per_look sending_;
};

}  // namespace weir
