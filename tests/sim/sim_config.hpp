#pragma once
// One run's shape, all drawn from its seed: how many shards, producers and
// sink workers, how small the segments are (small, so that rotation,
// deletion and the cap happen within a few hundred steps), the group-commit
// and batching knobs, and how often the plan injects faults and crashes.
#include <cstdint>
#include <string>

#include "config/config.hpp"

namespace weir::sim {

/// Deliberate breakage, to prove the invariants catch it (never on in a real sweep).
enum class sabotage : std::uint8_t {
  none,
  lying_fdatasync,     // the disk: fdatasync returns success without syncing
  lying_dir_fsync,     // the disk: a directory fsync returns success without syncing
  buffered_as_durable, // the harness: a Buffered ack is taken for a Durable one
  sink_drops,          // the sink: every 5th commit says "committed" and stores nothing
  sink_reverses,       // the sink: stores each batch in reverse order
};

const char* name_of(sabotage s);
/// nullopt-like: returns false for an unknown name.
bool parse_sabotage(const std::string& name, sabotage& out);

/// How the shard writer and its fsync group share the syncs.
enum class sync_wiring : std::uint8_t {
  /// The writer hands every Durable group to the fsync group.
  separate,
  /// As runtime/pipeline.cpp wires them: the writer syncs a group itself while
  /// its fsync group is idle and its mailbox empty, or under the adaptive
  /// policy while the shard has had no Buffered push for the quiet time, and
  /// leaves the replies of such a sync to the fsync group when more waits;
  /// and spare segments are prepared ahead and delivered ones recycled.
  daemon,
};

struct sim_config {
  std::uint64_t seed = 0;
  unsigned steps = 250;

  std::uint16_t shards = 1;
  unsigned producers = 2;
  std::uint32_t sink_concurrency = 1;
  std::uint64_t segment_max_bytes = 1024;
  std::uint32_t max_group_records = 16;
  commit_policy policy = commit_policy::adaptive;
  std::uint32_t fsync_max_delay_us = 1000;
  std::uint32_t fsync_max_records = 8;
  std::uint32_t batch_max_records = 4;
  std::uint32_t linger_ms = 2;
  std::uint64_t wab_cap_bytes = 1ull << 30;
  std::uint32_t retry_initial_ms = 10;
  std::uint32_t retry_max_ms = 400;
  std::uint32_t health_interval_ms = 500;
  std::uint64_t dead_letter_max_bytes = 1ull << 30;

  // The plan: percent chances per step, and limits.
  unsigned fault_percent = 8;
  unsigned crash_percent = 2;
  unsigned max_crashes = 3;
  unsigned poison_percent = 3;     // records the sink refuses for good
  unsigned writeback_percent = 50; // crashes after which part of the dirty pages survived
  unsigned max_payload = 120;

  sabotage broken = sabotage::none;

  sync_wiring wiring = sync_wiring::separate;
  /// With the daemon's wiring and the adaptive policy: the quiet time after a
  /// Buffered push is zero (the writer syncs every flushed group itself while
  /// its fsync group is idle) or longer than any run (it does so only while
  /// the shard has had no Buffered push in this life). The daemon's second
  /// would make a replay depend on the wall clock.
  bool quiet_at_once = false;
  /// With the daemon's wiring: spare segments kept per shard (prepared ahead
  /// by a segment_preparer, delivered segments recycled), 1 or 2.
  std::uint32_t spare_segments = 0;
};

sim_config make_config(std::uint64_t seed, unsigned steps, sabotage broken = sabotage::none,
                       sync_wiring wiring = sync_wiring::separate);
/// One line: "shards=2 producers=3 concurrency=1 segment=768 ...".
std::string describe(const sim_config& c);

}  // namespace weir::sim
