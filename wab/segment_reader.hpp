#pragma once
// Iterates the records of one segment file and says precisely why it
// stopped: a clean end, a zero-filled tail, a torn final write, corruption
// with valid data after it, or an I/O error.
//
// With a resync window the reader also reads past damage: at a record that
// does not check it searches forward for the next offset holding a record
// whose header is plausible (length within bounds, timestamp inside the
// window) and whose CRC checks, and goes on from there. The damaged record
// costs one index, so the records after it keep theirs; when only its length
// field was damaged, the bytes up to the next record still carry its CRC and
// it is recovered whole. Without a window the reader stops at the damage.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "wab/file_io.hpp"
#include "wab/segment_format.hpp"

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

/// Ingest times a record of this segment can plausibly carry: what makes a
/// search through damaged bytes cheap, since a random 8-byte timestamp almost
/// never falls inside it.
struct resync_window {
  std::int64_t min_ts_ns = 0;
  std::int64_t max_ts_ns = 0;
};

/// A day either side of the segment's life (clocks step), up to `now_ns`.
resync_window resync_window_for(const segment_header& header, std::int64_t now_ns);

/// The header (and seal) at the start of an open segment file; too_short
/// also when the file cannot be read.
outcome<segment_header, header_error> read_segment_header(file_io& io, int fd);

/// Whether `seal`'s record count fits its extent: every record takes at
/// least a record header. One that does not (2^64 - 1 records in 40 bytes)
/// was never written by weir.
bool seal_count_possible(const segment_header& header, const segment_seal& seal);

/// The seal, when it can be believed of a file this size: its end lies
/// between the data start and the file's end (a seal claiming more than the
/// file holds means the file was cut; it is read to its end instead), and
/// its record count fits that extent.
std::optional<segment_seal> usable_seal(const segment_header& header, std::uint64_t file_size);

/// Where a segment's records end: where its usable seal says, else at the
/// end of the file.
std::uint64_t records_end(const segment_header& header, std::uint64_t file_size);

/// Where a segment file's records start (its data start) and end (records_end).
struct segment_extent {
  std::uint64_t start = 0, end = 0;
  std::optional<std::uint64_t> sealed_records;  // what its seal counts, when it has one
};
/// The extent of the segment file at `path`; -errno when the file cannot be
/// read. A header that does not check (damage, not an I/O error) gives the
/// whole file from the header's end: never an extent that looks empty.
outcome<segment_extent, int> read_segment_extent(file_io& io, const std::string& path);

/// The bytes a reader reads ahead into. A caller that makes a reader for
/// every read (the drain) keeps one and lends it to each: a fresh buffer is
/// a fresh mapping (the daemon maps every allocation of 128 KiB and more),
/// and faulting its pages in cost more than the read itself.
struct read_ahead_buffer {
  std::unique_ptr<std::uint8_t[]> bytes;
  std::size_t capacity = 0;
};

class segment_reader {
 public:
  /// Reads the records of the segment `header` describes that lie before
  /// `end` (the file size, or a sealed segment's data end), from
  /// `start_offset` (raised to the header's data start). The caller has
  /// checked the header.
  segment_reader(file_io& io, int fd, const segment_header& header, std::uint64_t end,
                 std::uint64_t start_offset = 0, std::uint64_t start_index = 1,
                 std::optional<resync_window> resync = std::nullopt);

  /// Gives back what a lent buffer grew past the usual read-ahead for an
  /// outsized record: the lender keeps it for good.
  ~segment_reader();
  segment_reader(const segment_reader&) = delete;
  segment_reader& operator=(const segment_reader&) = delete;

  /// Reads ahead into `buffer` instead of a buffer of its own; `buffer`
  /// outlives the reader. Whatever was read ahead before is not served again.
  void use_buffer(read_ahead_buffer& buffer) {
    buffer_ = &buffer;
    buffer_size_ = 0;
  }

  std::optional<stored_record> next();
  /// The next record into `out`, its payload copied into the buffer `out`
  /// already has: a drain that reuses its delivered records allocates
  /// nothing per record. False at the end (stop() says why).
  bool next(stored_record& out) { return read_next(&out); }
  /// Checks the next record and moves past it without copying its payload
  /// (recovery, which only needs to know where the valid records end).
  bool advance() { return read_next(nullptr); }

  scan_stop stop() const { return stop_; }
  /// Offset just past the last valid record: where a repaired file ends.
  std::uint64_t valid_end() const { return offset_; }
  std::uint64_t records_read() const { return returned_; }
  /// Index the record at valid_end() has.
  std::uint64_t next_index() const { return index_; }
  int error() const { return error_; }
  /// Damaged records read past (resync only): lost, or recovered whole.
  std::uint64_t damaged() const { return damaged_; }
  std::uint64_t recovered() const { return recovered_; }
  /// Offset of the first damaged record, when there was one.
  std::optional<std::uint64_t> first_damage() const { return first_damage_; }

 private:
  struct header_fields {
    std::uint32_t length;
    std::uint32_t crc;
    std::int64_t ts;
  };

  /// Bytes [at, at + n) of the file (fewer at its end), from the read-ahead
  /// buffer, refilled from `at` when they are not all in it: a scan costs a
  /// read per read_ahead bytes, not two per record. Empty on an I/O error
  /// (error_ set). Valid until the next call.
  byte_span bytes_at(std::uint64_t at, std::size_t n);
  /// Whether every byte from `from` to the end of the file is zero.
  std::optional<bool> zeros_from(std::uint64_t from);
  /// Classifies a record at offset_ that does not check and nothing valid follows.
  void stop_at_bad_record(std::uint64_t checked_up_to, bool zero_length);
  /// The payload of a record at `at` if its CRC checks; nullopt otherwise
  /// (error_ set on I/O failure). Valid until the next read.
  std::optional<byte_span> checked_payload(std::uint64_t at, const header_fields& h);
  /// Moves past the next record that checks (or is recovered) and fills
  /// `out` with it, when given; false when the scan stops.
  bool read_next(stored_record* out);
  /// The first offset after `from` holding a record that checks; nullopt when
  /// none does (or the search budget ran out, or I/O failed: error_ set).
  std::optional<std::uint64_t> find_next_record(std::uint64_t from);
  /// Reads past the damaged record at offset_ to the next good one at `next`;
  /// true, with the damaged record itself in `out` (when given), when it can
  /// be recovered.
  bool skip_damage(std::uint64_t next, const header_fields& bad, stored_record* out);
  /// Fills `out` (when given) with the record at offset_.
  void take(stored_record* out, std::int64_t ts, byte_span payload) const;
  void finish(scan_stop s) { stop_ = s; }

  file_io& io_;
  int fd_;
  std::uint32_t crc_seed_;
  std::uint64_t size_;
  std::uint64_t offset_;
  std::uint64_t index_;
  std::uint64_t returned_ = 0;
  std::optional<resync_window> resync_;
  std::uint64_t search_budget_;  // payload bytes a search may still CRC
  std::uint64_t damaged_ = 0, recovered_ = 0;
  std::optional<std::uint64_t> first_damage_;
  scan_stop stop_ = scan_stop::none;
  int error_ = 0;
  // File bytes [buffer_at_, buffer_at_ + buffer_size_). Not a vector: each
  // refill is overwritten by pread at once, and zeroing it first cost as much
  // as the read itself.
  read_ahead_buffer own_buffer_;
  read_ahead_buffer* buffer_ = &own_buffer_;
  std::size_t buffer_size_ = 0;
  std::uint64_t buffer_at_ = 0;
};

/// The usable seal of the open segment `fd`, unless a record of this
/// segment that checks starts where it says the records end: what follows a
/// true seal's end is zeros or an earlier life's bytes, whose CRCs never
/// check in this one, so such a seal was not written by weir (records after
/// it would be dropped if it were believed). One record header read.
std::optional<segment_seal> believable_seal(file_io& io, int fd, const segment_header& header, std::uint64_t file_size);

}  // namespace weir::wab
