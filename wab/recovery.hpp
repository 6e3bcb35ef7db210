#pragma once
// Startup recovery of one shard directory, before any socket accepts:
//   - a segment whose header cannot be read is moved whole to quarantine/;
//   - a sealed segment (version 2) is taken at its seal's word, unread: the
//     seal was written after a sync covering every record it counts, and the
//     drain checks each record as it reads it;
//   - an unsealed version-2 segment (the one open when the daemon stopped)
//     ends at its first record that does not check, and is sealed there;
//   - the newest version-1 segment may end in a torn final write or a
//     zero-filled tail: it is truncated at the last valid record;
//   - any other damage — a bad record with a good one after it, or a bad
//     tail on a closed version-1 segment — is never taken for a torn write:
//     the whole file is copied to quarantine/ first, the reader
//     resynchronises on the next record whose CRC checks (losing at most the
//     damaged record, and not even that when only its length was hit).
// Every repair is synced (file, then directory) before recovery returns.
#include <cstdint>
#include <stdexcept>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "wab/file_io.hpp"

namespace weir::wab {

struct recovered_segment {
  std::uint64_t sequence = 0;
  std::string path;
  std::uint64_t records = 0;
  std::uint64_t valid_bytes = 0;  // where its records end
};

/// A repair an operator must hear of. Recovery does not log (the WAB library
/// has no logger); the caller reports each event.
struct recovery_event {
  enum class severity { warning, error };
  severity level = severity::warning;
  std::string what;
  std::vector<std::pair<std::string, std::string>> fields;
};

struct shard_recovery {
  std::vector<recovered_segment> segments;  // in sequence order
  std::uint64_t next_sequence = 1;          // for the next segment the shard creates
  std::uint64_t records = 0;
  std::uint64_t truncated_segments = 0;
  std::uint64_t sealed_segments = 0;  // version 2: read to their end and sealed now
  std::uint64_t quarantined_segments = 0;
  std::uint64_t damaged_records = 0;  // skipped and not recoverable
  std::uint64_t damaged_seals = 0;    // seals whose record count their extent cannot hold
  std::uint64_t renamed_segments = 0;  // files named for another segment, renamed to what their header says
  std::set<std::uint64_t> damaged_at_startup;  // sequences of the segments found damaged (and reported) here
  std::vector<recovery_event> events;  // in the order they happened
};

struct recovery_error : std::runtime_error {
  using std::runtime_error::runtime_error;
  /// What recovery had already repaired when it failed: still to be reported.
  std::vector<recovery_event> events;
};

/// Recovers `shard_dir`; quarantined copies go to `quarantine_dir` as
/// "<shard-dir-name>__<file>" (".1", ".2"... on a name collision).
/// `now_ns` bounds the ingest times a record can carry (see resync_window).
/// Throws recovery_error when the directory itself cannot be read or repaired.
shard_recovery recover_shard(file_io& io, const std::string& shard_dir, const std::string& quarantine_dir,
                             std::int64_t now_ns);
/// The same, at the wall clock's now.
shard_recovery recover_shard(file_io& io, const std::string& shard_dir, const std::string& quarantine_dir);

}  // namespace weir::wab
