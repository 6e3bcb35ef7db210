#pragma once
// A shard's confirm cursor: the position of the first record not yet
// confirmed by the sink. Everything before it has been delivered; everything
// from it on is delivered (again) after a restart.
//
// File `<shard_dir>/confirm_cursor`, 8192 bytes: two slots, at offsets 0 and
// 4096 (separate pages, so one torn write can never touch both), each
//   "WCUR" | version u32 (2) | generation u64 | segment sequence u64 |
//   offset u64 | index u64 | crc32 of bytes [0, 40)
// An all-zero slot is empty. The valid slot with the higher generation is
// the cursor. A store overwrites the other slot in place and fdatasyncs it: a
// crash leaves either the old cursor or the new one, never a torn one, so
// records can be redelivered but never skipped — and since the file's bytes
// are already on disk, a store needs no free space: a full disk can still
// confirm, and so delete segments and free space.
//
// The file is made (reserved) once, through a temporary file renamed into
// place. A 36-byte version-1 file (one slot, replaced by rename) is still read.
#include <cstdint>
#include <memory>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/sink_list.hpp"
#include "wab/file_io.hpp"
#include "wab/segment_format.hpp"

namespace weir::wab {

struct confirm_cursor {
  std::uint64_t sequence = 0;                // segment of the next record to confirm
  std::uint64_t offset = segment_header_size;  // its record header's offset
  std::uint64_t index = 1;                   // its index in the segment

  bool operator==(const confirm_cursor&) const = default;
  auto operator<=>(const confirm_cursor& o) const = default;
};

inline constexpr const char* cursor_file_name = "confirm_cursor";

/// Each sink has a cursor of its own in every shard: confirm_cursor for the
/// default sink (the one a single `sink:` section configures),
/// confirm_cursor-<sink> for the others. (Sink names hold no '.', so no
/// cursor is named like another's temporary file.)
std::string cursor_file_name_for(const std::string& sink);

class cursor_file {
 public:
  cursor_file(std::shared_ptr<file_io> io, std::string shard_dir, const std::string& sink = default_sink_name);
  ~cursor_file();
  cursor_file(const cursor_file&) = delete;
  cursor_file& operator=(const cursor_file&) = delete;

  /// nullopt when no cursor was ever stored. A file that does not verify is
  /// reported through `damaged` and treated as absent: redelivering beats skipping.
  std::optional<confirm_cursor> load(bool* damaged = nullptr);
  /// Makes the two-slot file exist (keeping the loaded cursor), so that
  /// every later store overwrites bytes already allocated. 0 or -errno.
  int reserve();
  /// 0, or -errno when the cursor could not be made durable.
  int store(const confirm_cursor& c);
  bool reserved() const { return fd_ >= 0; }

 private:
  int create(const std::optional<confirm_cursor>& c);

  std::shared_ptr<file_io> io_;
  std::string dir_, path_;
  int fd_ = -1;  // the reserved file, open for in-place stores
  std::uint64_t generation_ = 0;
  std::optional<confirm_cursor> loaded_;
};

/// The sequence a shard's next segment takes after startup recovery found
/// `recovered_next` (its highest segment + 1). The cursor may point past every
/// segment left — the last one was delivered and deleted — and numbering must
/// go on after it: a reused sequence gives new records the ids of delivered
/// ones. (Skipping a number costs nothing.)
inline std::uint64_t next_segment_sequence(std::uint64_t recovered_next, const std::optional<confirm_cursor>& c) {
  return c && c->sequence + 1 > recovered_next ? c->sequence + 1 : recovered_next;
}

/// One-shot helpers (tools, tests).
std::optional<confirm_cursor> load_cursor(file_io& io, const std::string& shard_dir, bool* damaged = nullptr,
                                          const std::string& sink = default_sink_name);
int store_cursor(file_io& io, const std::string& shard_dir, const confirm_cursor& c,
                 const std::string& sink = default_sink_name);

/// The sinks that have a cursor file in `shard_dir`, by name.
std::vector<std::string> cursor_sinks(file_io& io, const std::string& shard_dir);

/// Every sink's cursor stored in `shard_dir` (every confirm_cursor* file
/// that verifies), by sink name, the sinks configured now or not.
std::map<std::string, confirm_cursor> load_every_cursor(file_io& io, const std::string& shard_dir);

/// The cursors of several sinks as recovery needs them: a segment below
/// `oldest` is delivered to every sink that has a cursor (it may be gone, or
/// a spare); numbering must go on past `newest`. Both nullopt without any.
struct cursor_span {
  std::optional<confirm_cursor> oldest, newest;
};
cursor_span span_of(const std::map<std::string, confirm_cursor>& cursors);

}  // namespace weir::wab
