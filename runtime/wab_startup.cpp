#include "runtime/wab_startup.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "config/sink_list.hpp"
#include "runtime/data_dir.hpp"
#include "observability/log.hpp"
#include "runtime/startup_error.hpp"
#include "wab/confirm_cursor.hpp"
#include "wab/file_io.hpp"
#include "wab/recovery.hpp"
#include "wab/segment_format.hpp"

namespace weir {

namespace {

/// Logs what recovery repaired: an error for damage, a warning for a routine repair.
void report(const std::vector<wab::recovery_event>& events) {
  for (const auto& e : events)
    log::write(e.level == wab::recovery_event::severity::error ? log_level::error : log_level::warn, e.what, e.fields);
}

/// A sink no longer configured holds nothing back: its cursor goes, said.
/// Kept, it would stand for how far every sink has confirmed, and a spare
/// recycled from a segment the configured sinks all had would look
/// undelivered. Configured again later, the sink starts from the oldest
/// segment held, as a new one does.
void forget_removed_sinks(wab::file_io& io, const std::string& shard_dir, const std::vector<sink_config>& sinks) {
  for (const auto& name : wab::cursor_sinks(io, shard_dir)) {
    const bool configured =
        std::any_of(sinks.begin(), sinks.end(), [&](const sink_config& s) { return s.name == name; });
    if (configured) continue;
    const std::string path = shard_dir + "/" + wab::cursor_file_name_for(name);
    if (int rc = io.unlink(path); rc < 0 && rc != -ENOENT) {
      log::warn("cannot remove the confirm cursor of a sink no longer configured",
                {{"sink", name}, {"path", path}, {"error", std::strerror(-rc)}});
      continue;
    }
    io.fsync_directory(shard_dir);
    log::info("a sink is no longer configured: its confirm cursor is removed (configured again, it starts from the "
              "oldest segment held)",
              {{"sink", name}, {"dir", shard_dir}});
  }
}

}  // namespace

wab_startup recover_wab(const config& cfg, wab::file_io* io) {
  auto real = wab::default_file_io();
  if (!io) io = real.get();
  const std::string wab_dir = cfg.data_dir + "/wab", quarantine = cfg.data_dir + "/quarantine";
  ensure_private_directory(wab_dir, "data_dir");
  ensure_private_directory(quarantine, "data_dir");
  for (std::int64_t shard = 0; shard < cfg.ingest.shards; ++shard)
    ensure_private_directory(wab_dir + "/" + wab::shard_dir_name(static_cast<std::uint16_t>(shard)), "data_dir");
  std::vector<std::filesystem::path> shard_dirs;
  for (const auto& entry : std::filesystem::directory_iterator(wab_dir)) {
    std::error_code ec;  // a dangling or looping link named like a shard is not one
    if (entry.is_directory(ec) && wab::parse_shard_dir_name(entry.path().filename().string()))
      shard_dirs.push_back(entry.path());
  }
  std::sort(shard_dirs.begin(), shard_dirs.end());

  wab_startup out;
  const auto sinks = configured_sinks(cfg);
  for (const auto& dir : shard_dirs) {
    try {
      forget_removed_sinks(*io, dir.string(), sinks);
      auto r = wab::recover_shard(*io, dir.string(), quarantine);
      report(r.events);
      const auto shard = *wab::parse_shard_dir_name(dir.filename().string());
      // Numbering goes on past every sink's cursor; a record is undelivered
      // while one sink (the furthest behind) has not confirmed it.
      const auto cursors = wab::span_of(wab::load_every_cursor(*io, dir.string()));
      const auto& cursor = cursors.oldest;
      out.next_sequence[shard] = wab::next_segment_sequence(r.next_sequence, cursors.newest);
      out.damaged_at_startup[shard] = r.damaged_at_startup;
      for (const auto& seg : r.segments) {
        out.bytes += seg.valid_bytes;
        out.segment_records[shard][seg.sequence] = seg.records;
        // Past the confirm cursor: not delivered yet.
        if (!cursor || seg.sequence > cursor->sequence)
          out.undelivered += seg.records;
        else if (seg.sequence == cursor->sequence && seg.records >= cursor->index)
          out.undelivered += seg.records - cursor->index + 1;
      }
      out.records += r.records;
      out.segments += r.segments.size();
      out.truncated += r.truncated_segments;
      out.sealed += r.sealed_segments;
      out.quarantined += r.quarantined_segments;
      out.damaged_records += r.damaged_records;
      out.damaged_seals += r.damaged_seals;
      out.renamed += r.renamed_segments;
    } catch (const wab::recovery_error& e) {
      report(e.events);
      throw startup_error(std::string("WAB recovery failed: ") + e.what());
    }
  }
  log::info("WAB recovered", {{"shards", std::to_string(shard_dirs.size())},
                              {"segments", std::to_string(out.segments)},
                              {"records", std::to_string(out.records)},
                              {"bytes", std::to_string(out.bytes)},
                              {"truncated_segments", std::to_string(out.truncated)},
                              {"sealed_segments", std::to_string(out.sealed)},
                              {"quarantined_segments", std::to_string(out.quarantined)},
                              {"damaged_records_lost", std::to_string(out.damaged_records)},
                              {"damaged_seals", std::to_string(out.damaged_seals)},
                              {"renamed_segments", std::to_string(out.renamed)}});
  return out;
}

}  // namespace weir
