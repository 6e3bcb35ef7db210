#pragma once
// A shard's confirm cursor: the position of the first record not yet
// confirmed by the sink. Everything before it has been delivered; everything
// from it on is delivered (again) after a restart.
//
// File `<shard_dir>/confirm_cursor`, 36 bytes:
//   "WCUR" | version u32 (1) | segment sequence u64 | offset u64 | index u64 |
//   crc32 of bytes [0, 32)
// It is replaced atomically: written to `confirm_cursor.tmp`, fdatasynced,
// renamed over the old one, and the directory fsynced. A crash leaves either
// the old cursor or the new one, never a torn one, so records can be
// redelivered but never skipped.
#include <cstdint>
#include <optional>
#include <string>

#include "runtime/wab/file_io.hpp"
#include "runtime/wab/segment_format.hpp"

namespace weir::wab {

struct confirm_cursor {
  std::uint64_t sequence = 0;                // segment of the next record to confirm
  std::uint64_t offset = segment_header_size;  // its record header's offset
  std::uint64_t index = 1;                   // its index in the segment

  bool operator==(const confirm_cursor&) const = default;
  auto operator<=>(const confirm_cursor& o) const = default;
};

inline constexpr const char* cursor_file_name = "confirm_cursor";

/// nullopt when there is no cursor file (nothing confirmed yet). A cursor
/// file that does not verify is reported through `damaged` and treated as
/// absent: redelivering beats skipping.
std::optional<confirm_cursor> load_cursor(file_io& io, const std::string& shard_dir, bool* damaged = nullptr);

/// 0, or -errno when the cursor could not be made durable.
int store_cursor(file_io& io, const std::string& shard_dir, const confirm_cursor& c);

}  // namespace weir::wab
