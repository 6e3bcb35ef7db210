// weir-ctl dump: the records of one segment file with their coordinates —
// index, offset, ingest time — and the record id the sink receives as the
// record's idempotency key (the one AckTracked carried when it was pushed).
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "tools/ctl_commands.hpp"
#include "tools/ctl_record_view.hpp"
#include "tools/ctl_segment_scan.hpp"
#include "wab/dry_run_file_io.hpp"
#include "wab/node_id_file.hpp"
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

}  // namespace

int dump_segment(const std::string& data_dir, dump_request req) {
  if (req.node == 0) req.node = wab::read_node_id(data_dir);
  const fs::path file = segment_file(data_dir, req.segment);
  wab::dry_run_file_io io;  // read-only opens
  nlohmann::json out = nlohmann::json::array();
  std::string segment;
  std::uint64_t shown = 0;
  const auto scan = scan_segment(io, file.string(), [&](const wab::stored_record& r) {
    if (r.index < req.from || shown >= req.count) return;
    ++shown;
    if (req.format == dump_format::json) out.push_back(record_json(segment, r));
    else print_record(segment, r, req.format == dump_format::hex);
  }, [&](const wab::segment_header& h) { segment = coordinate_segment(file, h, req.node); });
  if (!scan.header) {
    std::fprintf(stderr, "weir-ctl dump: %s: %s\n", file.c_str(), scan.problem.c_str());
    return scan.problem.rfind("header unreadable", 0) == 0 ? 1 : 2;
  }
  if (req.format == dump_format::json) std::cout << out.dump() << "\n";
  if (scan.seal_damaged && scan.damaged == 0 && scan.lost == 0) {
    std::fprintf(stderr,
                 "weir-ctl dump: %s: damaged: its seal was not written by weir (it claims %llu record(s); a count its "
                 "records do not reach or its extent cannot hold, or records follow its end); the %llu record(s) "
                 "that check are shown\n",
                 file.c_str(), static_cast<unsigned long long>(scan.header->seal ? scan.header->seal->records : 0),
                 static_cast<unsigned long long>(scan.records));
    return 1;
  }
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
