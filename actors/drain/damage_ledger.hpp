#pragma once
// What the drain finds damaged as it reads. A sealed segment is trusted at
// startup without being read, so damage in it is first seen here: it is
// reported once per place, copied to quarantine once per run (as recovery
// would have), and the records lost are counted — those a damaged stretch
// took, and those a seal counts that the indices never reached. What
// startup recovery found and counted already is not counted again.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "actors/drain.hpp"
#include "wab/segment_reader.hpp"

namespace weir::drain_parts {

class damage_ledger {
 public:
  /// `settings` must outlive it (the drain's own).
  damage_ledger(const drain_settings& settings, std::string shard_name);

  /// After a read of segment `seq`: the damaged records it stepped over
  /// and could not recover are lost.
  void count_skipped(std::uint64_t seq, const wab::segment_reader& reader);
  /// After a read of segment `seq` (open as `fd`, named `segment` in record
  /// coordinates) that met damage, or `ends_early`: its records stop
  /// checking before its known end, with no good record after them (the
  /// rest is lost). Reported once per place.
  void met_damage(std::uint64_t seq, int fd, const std::string& segment, const wab::segment_reader& reader,
                  bool ends_early);
  /// Segment `seq` read to its end, the next index `next_index`: a seal's
  /// count that the indices did not reach was lost too (a damaged stretch
  /// of several records costs one index; a tail that stopped checking, all
  /// it held) — unless no damage was met in it: then the count is wrong,
  /// said once, and nothing is lost.
  void read_to_end(std::uint64_t seq, std::optional<std::uint64_t> sealed_records, std::uint64_t next_index);

 private:
  /// Whether this drain speaks for segment `seq`'s damage (damage_claims).
  bool speaks_for(std::uint64_t seq) const;
  /// Records of segment `seq` this sink's drain will never deliver; the
  /// shard's count too, when this drain speaks for the segment.
  void count_lost(std::uint64_t seq, std::uint64_t records);
  void report(std::uint64_t seq, int fd, const std::string& segment, const wab::segment_reader& reader,
              bool ends_early);

  const drain_settings& s_;
  std::string shard_name_;
  std::set<std::uint64_t> quarantined_;  // copied to quarantine this run, or by recovery at startup
  std::pair<std::uint64_t, std::uint64_t> last_reported_{0, 0};  // (segment, offset)
  std::set<std::uint64_t> damage_met_;  // segments whose reads met damage this run
  std::uint64_t lost_counted_for_ = 0;  // the segment whose seal was last compared with its indices
};

}  // namespace weir::drain_parts
