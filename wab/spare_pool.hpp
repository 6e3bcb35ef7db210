#pragma once
// Files kept ready to become a shard's next segments, so that appends land
// in blocks that are already allocated and written: an fdatasync after an
// overwrite flushes the data alone, while one after an append that grows the
// file must also commit its new size and extents through the journal.
//
// A spare is `spare_NNNNNNNN.wab` in the shard directory: either prepared
// (zero-filled to the segment size, synced) or recycled (a delivered segment,
// renamed, its old bytes still in it — version-2 record CRCs start from the
// segment's sequence, so none of them can pass for a record of the new one).
// `spare_NNNNNNNN.tmp` is a preparation a crash interrupted.
//
// Shared by three threads: the shard writer takes spares, the drain gives
// delivered segments back, the preparer fills the pool; a mutex guards the list.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "wab/file_io.hpp"

namespace weir::wab {

class spare_pool {
 public:
  /// Holds up to `keep` spares of `segment_bytes` each (0: none, every
  /// segment grows as it is written). A spare is prepared only while room for
  /// another whole segment and `min_free_bytes` would still be free once it
  /// is made.
  spare_pool(std::shared_ptr<file_io> io, std::string shard_dir, std::uint64_t segment_bytes, std::uint32_t keep,
             std::uint64_t min_free_bytes);

  /// Takes over the spares an earlier run left and removes interrupted
  /// preparations and spares holding version-1 records. Returns -errno when
  /// the directory cannot be read.
  int adopt();
  /// A spare's path, now the caller's to rename; nullopt when none is ready.
  std::optional<std::string> take();
  /// Keeps a delivered segment as a spare when fewer than `keep` are held, it
  /// is at least a segment's size and of the current format version (whose
  /// records cannot pass for a later segment's; renamed; the caller syncs the directory,
  /// as after an unlink). 1 when kept, 0 when the caller should delete it, or
  /// -errno when the rename failed.
  int recycle(const std::string& segment_path);
  /// Prepares one zero-filled spare when fewer than `keep` are held or being
  /// made: 1 when made, 0 when none is needed, -errno on failure (ENOSPC
  /// when the disk has no room for one).
  int prepare_one();

  std::size_t held() const;
  std::uint32_t keep() const { return keep_; }
  std::uint64_t segment_bytes() const { return segment_bytes_; }

 private:
  std::string spare_path(std::uint64_t n, const char* suffix) const;
  /// Whether a new segment may start in `path`: its first bytes are zeros
  /// (prepared here) or a current-version header (recycled). Anything else —
  /// a version-1 segment, a header that does not check, an unreadable file —
  /// could hold records whose CRCs do not depend on the new sequence.
  bool reusable(const std::string& path) const;
  bool full() const;
  bool full_locked() const;  // with mutex_ held

  std::shared_ptr<file_io> io_;
  const std::string dir_;
  const std::uint64_t segment_bytes_;
  const std::uint32_t keep_;
  const std::uint64_t min_free_bytes_;
  mutable std::mutex mutex_;
  std::vector<std::string> ready_;  // paths
  std::uint32_t preparing_ = 0;
  std::uint64_t next_number_ = 1;
};

/// "spare_00000003.wab" → 3; nullopt for other names. `suffix` ".wab" or ".tmp".
std::optional<std::uint64_t> parse_spare_file_name(std::string_view name, std::string_view suffix = ".wab");

}  // namespace weir::wab
