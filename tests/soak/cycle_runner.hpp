#pragma once
// Carries out one cycle_plan against the daemon: (kill during recovery,)
// start, wait until ready, load, (freeze,) SIGKILL.
#include <cstdint>
#include <string>

#include "soak/cycle_plan.hpp"
#include "soak/options.hpp"
#include "soak/soak_daemon.hpp"

namespace weir::soak {

struct fault_counts {
  std::uint64_t starts = 0;
  std::uint64_t recovery_kills = 0;
  std::uint64_t recovery_kills_before_recovered = 0;  // before the "WAB recovered" log line
  std::uint64_t recovery_kills_before_ready = 0;      // before the "ready" log line (includes the above)
  std::uint64_t freezes = 0;
  std::uint64_t kills_while_frozen = 0;
};

/// How long a start takes from fork to a HealthCheck answer, smoothed over
/// the starts so far: the scale for kills during startup.
struct startup_clock {
  std::chrono::microseconds typical{10000};
  void observe(std::chrono::microseconds t) { typical = (typical * 7 + t) / 8; }
};

struct cycle_outcome {
  bool ok = true;
  std::string failure;  // why the daemon did not come back (or would not die), with its log tail
};

cycle_outcome run_cycle(soak_daemon& d, const cycle_plan& plan, std::uint32_t cycle, const options& o,
                        fault_counts& counts, startup_clock& startup);

/// The last `lines` lines of a log, for failure reports.
std::string tail(const std::string& log, std::size_t lines);

}  // namespace weir::soak
