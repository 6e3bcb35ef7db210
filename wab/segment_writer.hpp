#pragma once
// Appends records to one segment file. A group of records goes out in one
// write; `sync()` makes everything written so far durable.
//
// Two threads share a writer: the shard writer appends (and syncs at
// rotation, and a group itself while its fsync group is idle), the fsync
// group syncs. Syncs are serialised: two fdatasync calls
// racing on one file could each see "success" while only one of them learns
// of a writeback error. After a failed write the file is closed for appends (the records
// that landed whole are kept and may still be synced and acked). After a
// failed sync it is finished for good: Linux reports a writeback error only
// once, so a later sync that "succeeds" proves nothing, and nothing written
// before the failure may ever be acked.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "wire/outcome.hpp"
#include "wab/file_io.hpp"
#include "wab/segment_format.hpp"

namespace weir::wab {

struct append_result {
  std::uint64_t first_index = 0;  // index of the group's first record
  std::uint64_t end_offset = 0;   // file offset just past the last record that landed
  std::size_t landed = 0;         // records written whole, in order from the first
  int error = 0;                  // 0, or -errno of the write that failed
};

class segment_writer {
 public:
  /// Makes `<shard_dir>/seg_<sequence>.wab` (or `file_name` when given)
  /// with its header and fsyncs the directory. With `reuse`, the file at that
  /// path (a spare: zero-filled, or a delivered segment's old bytes) becomes
  /// the segment: its blocks are already allocated and written, so a sync
  /// after an append flushes data only. Returns -errno on failure, leaving no
  /// file behind (a failed spare is removed too).
  static outcome<std::shared_ptr<segment_writer>, int> create(std::shared_ptr<file_io> io,
                                                              const std::string& shard_dir,
                                                              std::uint16_t shard, std::uint64_t sequence,
                                                              std::int64_t now_ns, std::string file_name = {},
                                                              std::string reuse = {});
  /// Opens an existing version-2 segment to append after its last valid
  /// record before `limit` (a replica continuing its copy of an origin's
  /// segment from the last byte it knows synced): anything after it is cut
  /// off and a seal cleared (zeroed), both synced, so the segment grows
  /// again. Returns -errno, or -EINVAL for a file that is no version-2
  /// segment of `sequence`.
  static outcome<std::shared_ptr<segment_writer>, int> reopen(std::shared_ptr<file_io> io, const std::string& path,
                                                              std::uint64_t sequence,
                                                              std::uint64_t limit = UINT64_MAX);
  ~segment_writer();
  segment_writer(const segment_writer&) = delete;
  segment_writer& operator=(const segment_writer&) = delete;

  /// Writes the records with one write call (appending thread only). When the
  /// write fails part-way, the records that landed whole are kept, the torn
  /// rest is cut off, and the file takes no more appends.
  append_result append(const std::vector<byte_span>& payloads, std::int64_t ingest_ts_ns);
  /// Writes records already in their on-disk form for this segment (checked
  /// by check_framed_records): `ends` holds the offset within `framed` just
  /// past each record. The same rules as append() on a failed write.
  append_result append_framed(byte_span framed, const std::vector<std::uint64_t>& ends);
  /// fdatasync (any thread; serialised). On failure returns -errno and
  /// finishes the file: every later sync fails too. Once sealed it returns 0
  /// without touching the file: the seal's syncs covered every write, and the
  /// file may be a spare again by then (a sync still waiting at the fsync
  /// group when the drain recycled it must not sync, or fail, the segment the
  /// file has become).
  int sync();
  /// Syncs, then records the segment's extent in its seal slot and syncs
  /// again (-errno on failure; the segment then stays unsealed and is read
  /// to its end after a restart). Appends must have stopped.
  int seal();
  /// Stops appends (rotation); syncing stays possible.
  void close_for_append() { append_closed_ = true; }

  bool append_closed() const { return append_closed_; }
  bool sync_failed() const { return sync_failed_; }
  /// Offset just past the last record: the segment's data, not its file size.
  std::uint64_t size() const { return size_; }
  std::uint64_t records() const { return records_; }
  std::uint64_t sequence() const { return sequence_; }
  /// "shard_NN/seg_SSSSSSSS.wab": the segment string of record ids.
  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }

 private:
  segment_writer(std::shared_ptr<file_io> io, int fd, std::string path, std::string name, std::uint64_t sequence,
                 std::uint64_t file_size);
  int sync_locked();
  /// Writes scratch_ (records ending at record_ends_) at the end of the data.
  append_result write_scratch();

  std::shared_ptr<file_io> io_;
  int fd_;
  std::string path_, name_;
  std::uint64_t sequence_;
  std::uint32_t crc_seed_;
  std::uint64_t file_size_;                   // allocated at creation (a spare's whole size)
  std::uint64_t size_ = segment_prefix_size;  // appending thread only
  std::uint64_t records_ = 0;                 // appending thread only
  std::atomic<bool> append_closed_{false};
  std::atomic<bool> sync_failed_{false};
  bool sealed_ = false;  // under sync_mutex_
  std::mutex sync_mutex_;
  byte_buffer scratch_;
  std::vector<std::uint64_t> record_ends_;
};

}  // namespace weir::wab
