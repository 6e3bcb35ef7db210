#include "actors/drain/known_segments.hpp"

#include <vector>

#include "wab/segment_reader.hpp"

namespace weir::drain_parts {

earlier_segments list_earlier_segments(wab::file_io& io, const std::string& shard_dir,
                                       std::uint64_t first_live_sequence) {
  earlier_segments out;
  std::vector<std::string> names;
  if (int rc = io.list_directory(shard_dir, names); rc < 0) {
    out.error = rc;
    out.failed = "cannot list the WAB segments of " + shard_dir;
    return out;
  }
  for (const auto& name : names) {
    const auto seq = wab::parse_segment_file_name(name);
    if (!seq || *seq >= first_live_sequence) continue;
    const auto extent = wab::read_segment_extent(io, shard_dir + "/" + name);
    if (!extent) {
      out.error = extent.error();
      out.failed = "cannot read the extent of WAB segment " + shard_dir + "/" + name;
      return out;
    }
    out.found[*seq] = {extent.value().start, extent.value().end, true, extent.value().sealed_records};
  }
  return out;
}

}  // namespace weir::drain_parts
