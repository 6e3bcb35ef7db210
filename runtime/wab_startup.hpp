#pragma once
// Startup recovery of the whole WAB: every shard directory present is
// repaired (a shard count lowered since the last run still leaves data to
// deliver), the configured shard directories are created, and the result
// tells each shard writer where to continue.
#include <cstdint>
#include <map>
#include <set>

#include "config/config.hpp"

#include "wab/file_io.hpp"

namespace weir {

struct wab_startup {
  std::map<std::uint16_t, std::uint64_t> next_sequence;  // per shard found on disk
  std::map<std::uint16_t, std::map<std::uint64_t, std::uint64_t>> segment_records;  // shard -> sequence -> records
  std::map<std::uint16_t, std::set<std::uint64_t>> damaged_at_startup;  // shard -> segments recovery found damaged
  std::uint64_t bytes = 0;                               // live segment bytes, all shards
  std::uint64_t segments = 0, records = 0, truncated = 0, sealed = 0, quarantined = 0, damaged_records = 0,
                damaged_seals = 0, renamed = 0;
  std::uint64_t undelivered = 0;  // records past the shards' confirm cursors
  std::uint64_t incarnation = 0;  // in a cluster, this node's life (runtime/node_life.hpp)
};

/// Throws startup_error when a shard directory cannot be read or repaired.
/// `io`: the file I/O seam (the cluster simulation's disks; else the real one).
wab_startup recover_wab(const config& cfg, wab::file_io* io = nullptr);

}  // namespace weir
