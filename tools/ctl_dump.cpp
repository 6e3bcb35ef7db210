// weir-ctl dump: the records of one segment file with their coordinates —
// index, offset, ingest time — and the record id the sink receives as the
// record's idempotency key (the one AckTracked carried when it was pushed).
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "messages/wire/coordinate.hpp"
#include "tools/ctl_commands.hpp"
#include "tools/ctl_segment_scan.hpp"
#include "wab/dry_run_file_io.hpp"
#include "wab/segment_format.hpp"

namespace weir::ctl {

namespace {

namespace fs = std::filesystem;

/// The file a SEGMENT argument names: "shard_NN/seg_….wab" under
/// data_dir/wab when it is there, else a path.
fs::path segment_file(const std::string& data_dir, const std::string& arg) {
  const fs::path p(arg);
  std::error_code ec;
  if (p.is_relative() && fs::exists(fs::path(data_dir) / "wab" / p, ec)) return fs::path(data_dir) / "wab" / p;
  return p;
}

/// The coordinate's segment string the daemon gives the records:
/// "[node_<id>/]shard_NN/seg_….wab", from the segment's own header (a copy
/// in quarantine or a backup has the ids it had in place). A replica's file
/// carries its origin in its path; a node's own WAB needs --node in a cluster.
std::string coordinate_segment(const fs::path& file, const wab::segment_header& header, std::uint16_t node) {
  const std::string origin = file.parent_path().parent_path().filename().string();
  std::string prefix;
  if (node != 0) prefix = "node_" + std::to_string(node) + "/";
  else if (origin.rfind("node_", 0) == 0) prefix = origin + "/";
  return prefix + wab::shard_dir_name(header.shard) + "/" + wab::segment_file_name(header.sequence);
}

std::string utc(std::int64_t ns) {
  const std::time_t s = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[64];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>((ns / 1000000) % 1000));
  return out;
}

void hex_lines(const byte_buffer& p) {
  for (std::size_t at = 0; at < p.size(); at += 16) {
    std::printf("    %08zx ", at);
    for (std::size_t i = at; i < at + 16; ++i) {
      if (i < p.size()) std::printf(" %02x", p[i]);
      else std::printf("   ");
    }
    std::printf("  %s\n", printable(byte_buffer(p.begin() + static_cast<std::ptrdiff_t>(at),
                                                p.begin() + static_cast<std::ptrdiff_t>(std::min(p.size(), at + 16))),
                                    16).c_str());
  }
}

}  // namespace

int dump_segment(const std::string& data_dir, const dump_request& req) {
  const fs::path file = segment_file(data_dir, req.segment);
  wab::dry_run_file_io io;  // read-only opens
  nlohmann::json out = nlohmann::json::array();
  std::string segment;
  std::uint64_t shown = 0;
  const auto scan = scan_segment(io, file.string(), [&](const wab::stored_record& r) {
    if (r.index < req.from || shown >= req.count) return;
    ++shown;
    const auto id = wire::to_hex(wire::compute_record_id(segment, r.index, r.payload));
    if (req.format == dump_format::json) {
      out.push_back({{"segment", segment}, {"index", r.index}, {"offset", r.offset}, {"ingest_ts_ns", r.ingest_ts_ns},
                     {"record_id", id}, {"payload_bytes", r.payload.size()}, {"payload_hex", wire::to_hex(r.payload)}});
      return;
    }
    std::printf("%s #%llu  offset %llu  %s  id %s  %zu B", segment.c_str(), static_cast<unsigned long long>(r.index),
                static_cast<unsigned long long>(r.offset), utc(r.ingest_ts_ns).c_str(), id.c_str(), r.payload.size());
    if (req.format == dump_format::hex) {
      std::printf("\n");
      hex_lines(r.payload);
    } else {
      std::printf("  %s\n", printable(r.payload, 200).c_str());
    }
  }, [&](const wab::segment_header& h) { segment = coordinate_segment(file, h, req.node); });
  if (!scan.header) {
    std::fprintf(stderr, "weir-ctl dump: %s: %s\n", file.c_str(), scan.problem.c_str());
    return scan.problem.rfind("header unreadable", 0) == 0 ? 1 : 2;
  }
  if (req.format == dump_format::json) std::cout << out.dump() << "\n";
  if (scan.damaged_or_lost()) {
    std::fprintf(stderr,
                 "weir-ctl dump: %s: damaged: record %llu (offset %llu) does not check; %llu record(s) lost%s%s\n",
                 file.c_str(), static_cast<unsigned long long>(scan.first_damage ? scan.first_damage->index : 0),
                 static_cast<unsigned long long>(scan.first_damage ? scan.first_damage->offset : 0),
                 static_cast<unsigned long long>(scan.lost), scan.problem.empty() ? "" : "; ", scan.problem.c_str());
    return 1;
  }
  return 0;
}

}  // namespace weir::ctl
