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
#include "wab/dry_run_file_io.hpp"
#include "wab/segment_format.hpp"
#include "wab/segment_reader.hpp"
#include "wab/wall_clock.hpp"

namespace weir::ctl {

namespace {

namespace fs = std::filesystem;

/// The file a SEGMENT argument names: a path, or "shard_NN/seg_….wab" under data_dir/wab.
fs::path segment_file(const std::string& data_dir, const std::string& arg) {
  if (fs::exists(arg)) return arg;
  return fs::path(data_dir) / "wab" / arg;
}

/// The coordinate's segment string the daemon gives records of `file`:
/// "[node_<id>/]shard_NN/seg_….wab". A replica's file carries its origin in
/// its path; a node's own WAB needs --node in a cluster.
std::string coordinate_segment(const fs::path& file, std::uint16_t node) {
  const std::string shard = file.parent_path().filename().string();
  const std::string origin = file.parent_path().parent_path().filename().string();
  std::string prefix;
  if (origin.rfind("node_", 0) == 0) prefix = origin + "/";
  else if (node != 0) prefix = "node_" + std::to_string(node) + "/";
  return prefix + shard + "/" + file.filename().string();
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
  const int fd = io.open_existing(file.string());
  if (fd < 0) {
    std::fprintf(stderr, "weir-ctl dump: cannot open %s: %s\n", file.c_str(), std::strerror(-fd));
    return 2;
  }
  const auto decoded = wab::read_segment_header(io, fd);
  if (!decoded) {
    io.close(fd);
    std::fprintf(stderr, "weir-ctl dump: %s: header unreadable (%s); weir-ctl segments says what recovery does with it\n",
                 file.c_str(), std::string(wab::name_of(decoded.error())).c_str());
    return 1;
  }
  const auto& header = decoded.value();
  const auto size = static_cast<std::uint64_t>(std::max<std::int64_t>(io.size(fd), 0));
  const std::string segment = coordinate_segment(file, req.node);
  wab::segment_reader reader(io, fd, header, wab::records_end(header, size), 0, 1,
                             wab::resync_window_for(header, wab::wall_clock_ns()));
  nlohmann::json out = nlohmann::json::array();
  std::uint64_t shown = 0;
  while (shown < req.count) {
    auto r = reader.next();
    if (!r) break;
    if (r->index < req.from) continue;
    ++shown;
    const auto id = wire::to_hex(wire::compute_record_id(segment, r->index, r->payload));
    if (req.format == dump_format::json) {
      out.push_back({{"segment", segment}, {"index", r->index}, {"offset", r->offset},
                     {"ingest_ts_ns", r->ingest_ts_ns}, {"record_id", id}, {"payload_bytes", r->payload.size()},
                     {"payload_hex", wire::to_hex(r->payload)}});
      continue;
    }
    std::printf("%s #%llu  offset %llu  %s  id %s  %zu B", segment.c_str(), static_cast<unsigned long long>(r->index),
                static_cast<unsigned long long>(r->offset), utc(r->ingest_ts_ns).c_str(), id.c_str(), r->payload.size());
    if (req.format == dump_format::hex) {
      std::printf("\n");
      hex_lines(r->payload);
    } else {
      std::printf("  %s\n", printable(r->payload, 200).c_str());
    }
  }
  io.close(fd);
  if (req.format == dump_format::json) std::cout << out.dump() << "\n";
  if (reader.damaged() > reader.recovered()) {
    std::fprintf(stderr, "weir-ctl dump: %s: %llu damaged record(s) read past and lost (first at offset %llu)\n",
                 file.c_str(), static_cast<unsigned long long>(reader.damaged() - reader.recovered()),
                 static_cast<unsigned long long>(reader.first_damage().value_or(0)));
    return 1;
  }
  return 0;
}

}  // namespace weir::ctl
