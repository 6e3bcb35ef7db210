#pragma once
// Startup recovery of one shard directory, before any socket accepts:
//   - a segment whose header cannot be read is moved whole to quarantine/;
//   - a torn final write or a zero-filled tail is truncated at the last
//     valid record;
//   - corruption with data after it: the whole file is copied to quarantine/
//     for inspection and the original is cut back to its valid prefix.
// Every repair is fsynced (file, then directory) before recovery returns.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/wab/file_io.hpp"

namespace weir::wab {

struct recovered_segment {
  std::uint64_t sequence = 0;
  std::string path;
  std::uint64_t records = 0;
  std::uint64_t valid_bytes = 0;  // file size after repair
};

struct shard_recovery {
  std::vector<recovered_segment> segments;  // in sequence order
  std::uint64_t next_sequence = 1;          // for the next segment the shard creates
  std::uint64_t records = 0;
  std::uint64_t truncated_segments = 0;
  std::uint64_t quarantined_segments = 0;
};

struct recovery_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Recovers `shard_dir`; quarantined copies go to `quarantine_dir` as
/// "<shard-dir-name>__<file>" (".1", ".2"... on a name collision).
/// Throws recovery_error when the directory itself cannot be read or repaired.
shard_recovery recover_shard(file_io& io, const std::string& shard_dir, const std::string& quarantine_dir);

}  // namespace weir::wab
