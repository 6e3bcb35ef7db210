#pragma once
// What one soak cycle does to the daemon, drawn from the seeded RNG before
// the cycle runs, so a seed names the same sequence of faults every time
// (the producers' timing still varies from run to run).
#include <chrono>
#include <optional>
#include <random>
#include <string>

#include "soak/options.hpp"

namespace weir::soak {

struct freeze {
  std::chrono::milliseconds at;      // into the load phase
  std::chrono::milliseconds length;  // SIGSTOP .. SIGCONT
  bool kill_while_frozen = false;    // the SIGKILL lands instead of the SIGCONT
};

struct cycle_plan {
  // Start the daemon, SIGKILL it this fraction of its usual fork-to-ready
  // time later (so the kill lands in exec, config loading or WAB recovery,
  // however fast the machine), then start it again.
  std::optional<double> recovery_kill;
  std::chrono::milliseconds load{0};  // producers push this long, then SIGKILL
  std::optional<freeze> pause;
};

cycle_plan plan_cycle(std::mt19937_64& rng, const options& o);

std::string describe(const cycle_plan& p);

}  // namespace weir::soak
