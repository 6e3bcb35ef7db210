#include "tools/ctl_record_view.hpp"

#include <cstdio>
#include <ctime>

#include "wire/coordinate.hpp"
#include "tools/ctl_commands.hpp"

namespace weir::ctl {

namespace fs = std::filesystem;

namespace {

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

std::string coordinate_segment(const fs::path& file, const wab::segment_header& header, std::uint16_t node) {
  const std::string origin = file.parent_path().parent_path().filename().string();
  std::string prefix;
  // A replica's directory names its origin, whatever node holds it.
  if (origin.rfind("node_", 0) == 0) prefix = origin + "/";
  else if (node != 0) prefix = "node_" + std::to_string(node) + "/";
  return prefix + wab::shard_dir_name(header.shard) + "/" + wab::segment_file_name(header.sequence);
}

nlohmann::json record_json(const std::string& segment, const wab::stored_record& r) {
  return {{"segment", segment},
          {"index", r.index},
          {"offset", r.offset},
          {"ingest_ts_ns", r.ingest_ts_ns},
          {"record_id", wire::to_hex(wire::compute_record_id(segment, r.index, r.payload))},
          {"payload_bytes", r.payload.size()},
          {"payload_hex", wire::to_hex(r.payload)}};
}

void print_record(const std::string& segment, const wab::stored_record& r, bool hex) {
  const auto id = wire::to_hex(wire::compute_record_id(segment, r.index, r.payload));
  std::printf("%s #%llu  offset %llu  %s  id %s  %zu B", segment.c_str(), static_cast<unsigned long long>(r.index),
              static_cast<unsigned long long>(r.offset), utc(r.ingest_ts_ns).c_str(), id.c_str(), r.payload.size());
  if (hex) {
    std::printf("\n");
    hex_lines(r.payload);
  } else {
    std::printf("  %s\n", printable(r.payload, 200).c_str());
  }
}

}  // namespace weir::ctl
