#pragma once
// How both simulations run their actors: one message at a time on CAF's
// test scheduler, each, when shuffled, taken half the time from a ready
// actor the seed picks. Actors run concurrently in the daemon, so any
// interleaving that keeps each mailbox in order is one it can meet.
#include <algorithm>
#include <cstddef>

#include <caf/monitorable_actor.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include "sim/producer_actor.hpp"
#include "sim/sim_rng.hpp"

namespace weir::sim {

/// Runs up to `n` messages, stopping early once `failed()`. True when
/// nothing is left to run.
template <class Failed>
bool run_jobs(caf::scheduler::test_coordinator& s, sim_rng& rng, std::size_t n, bool shuffled, Failed failed) {
  for (std::size_t i = 0; i < n; ++i) {
    if (s.jobs.empty()) return true;
    if (shuffled && s.jobs.size() > 1 && rng.percent(50)) {
      const auto k = static_cast<std::ptrdiff_t>(rng.below(s.jobs.size()));
      std::rotate(s.jobs.begin(), s.jobs.begin() + k, s.jobs.begin() + k + 1);
    }
    // Named for the replies this step writes (sim_connection).
    const auto* actor = dynamic_cast<const caf::monitorable_actor*>(s.jobs.front());
    set_running_actor(actor ? actor->name() : "");
    s.run_once();
    set_running_actor("");
    if (failed()) return false;
  }
  return s.jobs.empty();
}

}  // namespace weir::sim
