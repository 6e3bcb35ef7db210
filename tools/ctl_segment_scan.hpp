#pragma once
// One segment file read the way weir-ctl's offline commands need it: every
// record checked (resynchronising past damage, as the drain does), and what
// is lost counted the way startup recovery and the drain would count it.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wab/file_io.hpp"
#include "wab/segment_format.hpp"
#include "wab/segment_reader.hpp"

namespace weir::ctl {

struct segment_scan {
  std::string problem;      // set when the file cannot be read as a segment at all
  std::optional<wab::segment_header> header;
  bool sealed = false;      // its seal can be believed
  bool cut = false;         // sealed, but the file ends before the seal says: records lost
  bool seal_damaged = false; // a seal weir never wrote: a count its extent cannot hold, or
                             // records that check after its end (recovery reseals it, no loss)
  std::uint64_t records = 0;     // that check
  std::uint64_t records_end = 0; // byte offset where the last record that checks ends
  std::uint64_t damaged = 0, recovered = 0, lost = 0;
  struct damage {
    std::uint64_t index = 0, offset = 0;
  };
  std::optional<damage> first_damage;

  bool damaged_or_lost() const { return !problem.empty() || damaged > 0 || lost > 0 || seal_damaged; }
};

/// Reads `path` through `io` (a dry-run file layer: nothing is written);
/// `on_header` sees the header once it checks, then `each` every record
/// that checks, in order.
segment_scan scan_segment(wab::file_io& io, const std::string& path,
                          const std::function<void(const wab::stored_record&)>& each = {},
                          const std::function<void(const wab::segment_header&)>& on_header = {});

/// The segment files (seg_….wab) of a shard directory, in sequence order.
std::vector<std::pair<std::uint64_t, std::filesystem::path>> segment_files(const std::filesystem::path& shard_dir);

}  // namespace weir::ctl
