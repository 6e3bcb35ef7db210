#pragma once
// Iterates the records of one segment file and says precisely why it
// stopped: a clean end, a zero-filled tail, a torn final write, corruption
// with valid data after it, or an I/O error.
#include <cstdint>
#include <optional>

#include "runtime/wab/file_io.hpp"
#include "runtime/wab/segment_format.hpp"

namespace weir::wab {

struct stored_record {
  std::uint64_t index = 0;   // 1-based position in the segment
  std::uint64_t offset = 0;  // of the record header in the file
  std::int64_t ingest_ts_ns = 0;
  byte_buffer payload;
};

enum class scan_stop {
  none,         // still reading
  end_of_file,  // the last record ends exactly at the end of the file
  zero_tail,    // only zero bytes follow the last record
  torn_tail,    // the final write did not complete; nothing valid follows
  corrupt,      // a bad record with data after it that is not zeros
  io_error,
};

const char* name_of(scan_stop s);

class segment_reader {
 public:
  /// Reads records from `start_offset` (default: just past the header). The
  /// caller has checked the header: a file shorter than `start_offset` yields
  /// no record.
  segment_reader(file_io& io, int fd, std::uint64_t file_size,
                 std::uint64_t start_offset = segment_header_size, std::uint64_t start_index = 1);

  std::optional<stored_record> next();

  scan_stop stop() const { return stop_; }
  /// Offset just past the last valid record: where a repaired file ends.
  std::uint64_t valid_end() const { return offset_; }
  std::uint64_t records_read() const { return index_ - first_index_; }
  int error() const { return error_; }

 private:
  /// Whether every byte from `from` to the end of the file is zero.
  std::optional<bool> zeros_from(std::uint64_t from);
  void finish(scan_stop s) { stop_ = s; }

  file_io& io_;
  int fd_;
  std::uint64_t size_;
  std::uint64_t offset_;
  std::uint64_t index_;
  std::uint64_t first_index_;
  scan_stop stop_ = scan_stop::none;
  int error_ = 0;
};

}  // namespace weir::wab
