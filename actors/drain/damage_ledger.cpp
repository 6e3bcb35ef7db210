#include "actors/drain/damage_ledger.hpp"

#include "actors/drain/damage_claims.hpp"

#include <vector>

#include "observability/log.hpp"
#include "observability/metrics.hpp"
#include "wab/quarantine.hpp"
#include "wab/segment_format.hpp"

namespace weir::drain_parts {

damage_ledger::damage_ledger(const drain_settings& settings, std::string shard_name)
    : s_(settings), shard_name_(std::move(shard_name)), quarantined_(settings.damaged_at_startup) {}

void damage_ledger::count_skipped(std::uint64_t seq, const wab::segment_reader& reader) {
  if (reader.damaged() > 0) damage_met_.insert(seq);
  if (!s_.damaged_at_startup.count(seq)) count_lost(seq, reader.damaged() - reader.recovered());
}

bool damage_ledger::speaks_for(std::uint64_t seq) const {
  return !s_.damage_claims || s_.damage_claims->speaks_for(seq, s_.sink_index);
}

void damage_ledger::count_lost(std::uint64_t seq, std::uint64_t records) {
  if (records == 0) return;
  if (s_.progress) s_.progress->lost.fetch_add(records, std::memory_order_relaxed);
  if (s_.stats && speaks_for(seq)) s_.stats->lost.fetch_add(records, std::memory_order_relaxed);
}

void damage_ledger::met_damage(std::uint64_t seq, int fd, const std::string& segment, const wab::segment_reader& reader,
                               bool ends_early) {
  if (reader.damaged() == 0 && !ends_early) return;
  damage_met_.insert(seq);
  // A tail that stops checking is met again by the next read, which finds
  // nothing more: one report per place.
  const std::pair<std::uint64_t, std::uint64_t> at{seq, reader.first_damage().value_or(reader.valid_end())};
  if (at != last_reported_ && speaks_for(seq)) report(seq, fd, segment, reader, ends_early);
  last_reported_ = at;
}

void damage_ledger::read_to_end(std::uint64_t seq, std::optional<std::uint64_t> sealed_records,
                                std::uint64_t next_index) {
  if (seq == lost_counted_for_) return;
  lost_counted_for_ = seq;
  const std::uint64_t reached = next_index > 0 ? next_index - 1 : 0;
  if (!sealed_records || *sealed_records <= reached || s_.damaged_at_startup.count(seq)) return;
  if (!damage_met_.count(seq)) {
    // Every record to the seal's end checked, one after another: none is
    // missing, so the count is what lies (a seal weir never wrote).
    if (!speaks_for(seq)) return;
    log::error("WAB segment seal counts more records than its extent holds, each of which checks; the seal is not "
               "believed and nothing is counted lost",
               {{"segment", s_.segment_prefix + shard_name_ + "/" + wab::segment_file_name(seq)},
                {"sealed_records", std::to_string(*sealed_records)},
                {"records_read", std::to_string(reached)}});
    return;
  }
  count_lost(seq, *sealed_records - reached);
}

void damage_ledger::report(std::uint64_t seq, int fd, const std::string& segment, const wab::segment_reader& reader,
                           bool ends_early) {
  std::vector<std::pair<std::string, std::string>> fields{
      {"segment", segment},
      {"first_damage_offset", std::to_string(reader.first_damage().value_or(reader.valid_end()))},
      {"damaged_records_skipped", std::to_string(reader.damaged())},
      {"of_them_recovered", std::to_string(reader.recovered())}};
  if (ends_early)
    fields.emplace_back("unreadable_tail", std::string(wab::name_of(reader.stop())) + " from offset " +
                                               std::to_string(reader.valid_end()));
  if (!s_.quarantine_dir.empty() && quarantined_.count(seq) == 0) {
    const std::int64_t size = s_.io->size(fd);
    auto copy = wab::quarantine_copy(*s_.io, fd, size < 0 ? 0 : static_cast<std::uint64_t>(size), s_.quarantine_dir,
                                     shard_name_, wab::segment_file_name(seq));
    if (copy) quarantined_.insert(seq);  // else tried again should the damage be met again
    fields.emplace_back("quarantine", copy ? copy.value().path : "not copied: " + copy.error());
    if (copy && !copy.value().copied_before && s_.stats)
      s_.stats->quarantined_segments.fetch_add(1, std::memory_order_relaxed);
  }
  log::write(log_level::error, "WAB segment damaged; every record that checks is delivered", fields);
}

}  // namespace weir::drain_parts
