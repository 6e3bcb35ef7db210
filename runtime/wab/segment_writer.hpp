#pragma once
// Appends records to one segment file. A group of records goes out in one
// write; `sync()` makes everything written so far durable. After any write or
// sync failure the writer is retired: Linux reports a writeback error only
// once, so a later sync that "succeeds" proves nothing, and nothing written
// before the failure may ever be acked. The shard then starts a new segment.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "messages/wire/outcome.hpp"
#include "runtime/wab/file_io.hpp"
#include "runtime/wab/segment_format.hpp"

namespace weir::wab {

struct append_result {
  std::uint64_t first_index;  // index of the first record of the group
  std::uint64_t end_offset;   // file offset just past the group
};

class segment_writer {
 public:
  /// Creates `<shard_dir>/seg_<sequence>.wab` with its header and fsyncs the
  /// directory. Returns -errno on failure.
  static outcome<std::unique_ptr<segment_writer>, int> create(std::shared_ptr<file_io> io,
                                                              const std::string& shard_dir,
                                                              std::uint16_t shard, std::uint64_t sequence,
                                                              std::int64_t now_ns);
  ~segment_writer();
  segment_writer(const segment_writer&) = delete;
  segment_writer& operator=(const segment_writer&) = delete;

  /// Writes the records with one write call. On failure returns -errno and
  /// retires the writer.
  outcome<append_result, int> append(const std::vector<byte_span>& payloads, std::int64_t ingest_ts_ns);
  /// fdatasync. On failure returns -errno and retires the writer.
  int sync();

  bool retired() const { return retired_; }
  std::uint64_t size() const { return size_; }
  std::uint64_t records() const { return records_; }
  std::uint64_t sequence() const { return sequence_; }
  /// "shard_NN/seg_SSSSSSSS.wab": the segment string of record ids.
  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }

 private:
  segment_writer(std::shared_ptr<file_io> io, int fd, std::string path, std::string name, std::uint64_t sequence);

  std::shared_ptr<file_io> io_;
  int fd_;
  std::string path_, name_;
  std::uint64_t sequence_;
  std::uint64_t size_ = segment_header_size;
  std::uint64_t records_ = 0;
  bool retired_ = false;
  byte_buffer scratch_;
};

}  // namespace weir::wab
