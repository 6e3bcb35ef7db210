#pragma once
// Version-1 segment headers, as earlier releases wrote them: what a WAB
// upgraded in place still holds, and must still be read.
#include <cstdint>

#include "wire/bytes.hpp"

namespace weir::test {

inline byte_buffer v1_segment_header(std::uint16_t shard, std::uint64_t seq, std::int64_t created_at) {
  byte_buffer out{'W', 'W', 'A', 'B', 1, 0};
  append_le16(out, shard);
  append_le64(out, seq);
  append_le64(out, static_cast<std::uint64_t>(created_at));
  append_le32(out, 0);
  append_le32(out, crc32_of(out));
  return out;
}

}  // namespace weir::test
