#pragma once
// The segments a drain knows of: those an earlier run left, found once at
// start, and those the writer announces as it makes them. Each with its
// extent, and whether more will be appended.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "wab/file_io.hpp"
#include "wab/segment_format.hpp"

namespace weir::drain_parts {

struct segment_state {
  std::uint64_t start = wab::segment_prefix_size;  // its first record (every segment this run makes is version 2)
  std::uint64_t end = wab::segment_prefix_size;    // bytes known written, at a record boundary
  bool closed = false;                             // no more appends will come
  std::optional<std::uint64_t> sealed_records;     // an earlier run's seal: how many records it holds
  bool read_past_seal = false;                     // its records stopped before its seal's end: read to the file's
};

using segment_map = std::map<std::uint64_t, segment_state>;

/// What an earlier run left in `shard_dir`: every segment below
/// `first_live_sequence`, closed, with its extent (startup recovery sealed
/// every version-2 segment: the seal says where it ends; a version-1 file
/// ends where its records do).
struct earlier_segments {
  segment_map found;
  int error = 0;       // -errno when not all could be known
  std::string failed;  // what could not be done, when error
};
earlier_segments list_earlier_segments(wab::file_io& io, const std::string& shard_dir, std::uint64_t first_live_sequence);

}  // namespace weir::drain_parts
