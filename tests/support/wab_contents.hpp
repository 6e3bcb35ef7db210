#pragma once
// Reads back what a WAB directory holds, the way a crash-recovery check
// needs it: every record of a shard in write order, with its coordinate.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace weir::test {

struct wab_record {
  std::string segment;  // "shard_NN/seg_SSSSSSSS.wab"
  std::uint64_t index = 0;
  std::string payload;
};

/// The payloads of one segment file, read to its records' end, and why reading stopped.
struct segment_contents {
  std::vector<std::string> payloads;
  std::string stop;
};
segment_contents read_segment_file(const std::filesystem::path& file);

/// Every valid record of one shard directory, segments in sequence order.
std::vector<wab_record> shard_records(const std::filesystem::path& shard_dir);
/// Every shard under `<data_dir>/wab`, shards in name order.
std::vector<std::vector<wab_record>> all_shard_records(const std::filesystem::path& data_dir);

}  // namespace weir::test
