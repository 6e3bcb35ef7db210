#pragma once
// A deterministic simulation of the real ingest-and-delivery actors
// (shard_writer, fsync_group, drain, sink_runner, sink_worker) over a
// simulated disk, driven by one 64-bit seed. Each step the seed picks one
// thing: producers send requests, some actor messages run (in an order the
// seed picks among the ready actors), simulated time advances, a fault is
// armed, the sink changes mood, or the daemon crashes and restarts through
// recovery. The invariants (sim/invariants.hpp) are checked after every step
// and wherever an ack or a delivery happens; the run itself adds
// recovery-succeeds (startup recovery never throws on a crashed disk),
// actors-stay-up (no actor exits between crashes), and at the end — faults
// off, the sink healthy — quiescence, every-acked-delivered and
// recovers-after-faults (a new Durable push is acked and delivered again).
#include <array>
#include <cstdint>
#include <iosfwd>
#include <string>

#include "sim/fault_plan.hpp"
#include "sim/sim_config.hpp"

namespace weir::sim {

struct sim_options {
  std::uint64_t seed = 1;
  unsigned steps = 250;
  sabotage broken = sabotage::none;
  sync_wiring wiring = sync_wiring::separate;
  /// Every step, fault and crash as it happens (and the daemon's own log).
  std::ostream* trace = nullptr;
};

struct sim_result {
  bool ok = true;
  std::uint64_t seed = 0;
  unsigned failed_step = 0;
  std::string invariant, details;
  std::string replay;  // the command line that replays this run

  unsigned steps = 0, crashes = 0, lives = 0;
  std::uint64_t faults = 0, acked = 0, delivered = 0, deliveries = 0, records = 0;
  /// Durable records acked by the shard writer (a sync it ran) and by the fsync group.
  std::uint64_t durable_by_writer = 0, durable_by_fsync_group = 0;
  /// Groups whose replies the writer handed to its fsync group after its own sync.
  std::uint64_t handed_replies = 0;
  std::uint64_t quarantined = 0;  // segments recovery copied to quarantine/
  std::array<std::uint64_t, fault_kinds> fault_counts{};
  /// A digest of everything that happened: equal for two runs of one seed.
  std::uint64_t digest = 0;

  /// "sim: FAILED seed=... step=... invariant=...: ...; replay with: ..."
  std::string failure_line() const;
};

sim_result run_simulation(const sim_options& options);

}  // namespace weir::sim
