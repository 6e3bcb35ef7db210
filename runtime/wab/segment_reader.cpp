#include "runtime/wab/segment_reader.hpp"

#include <algorithm>
#include <array>

namespace weir::wab {

const char* name_of(scan_stop s) {
  switch (s) {
    case scan_stop::none: return "none";
    case scan_stop::end_of_file: return "end_of_file";
    case scan_stop::zero_tail: return "zero_tail";
    case scan_stop::torn_tail: return "torn_tail";
    case scan_stop::corrupt: return "corrupt";
    case scan_stop::io_error: return "io_error";
  }
  return "?";
}

segment_reader::segment_reader(file_io& io, int fd, std::uint64_t file_size, std::uint64_t start_offset,
                               std::uint64_t start_index)
    : io_(io), fd_(fd), size_(file_size), offset_(start_offset), index_(start_index), first_index_(start_index) {}

std::optional<bool> segment_reader::zeros_from(std::uint64_t from) {
  std::array<std::uint8_t, 64 * 1024> buf;
  while (from < size_) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size_ - from));
    const ssize_t got = pread_full(io_, fd_, buf.data(), want, from);
    if (got < 0) {
      error_ = static_cast<int>(-got);
      return std::nullopt;
    }
    if (got == 0) break;
    if (!std::all_of(buf.begin(), buf.begin() + got, [](std::uint8_t b) { return b == 0; })) return false;
    from += static_cast<std::uint64_t>(got);
  }
  return true;
}

std::optional<stored_record> segment_reader::next() {
  if (stop_ != scan_stop::none) return std::nullopt;
  if (offset_ >= size_) {
    finish(scan_stop::end_of_file);
    return std::nullopt;
  }
  // Classifies a record that cannot be read: zeros to the end of the file mean
  // the final write never completed; anything else means corruption in the middle.
  auto bad_record = [&](std::uint64_t after) {
    auto zeros = zeros_from(after);
    if (!zeros)
      finish(scan_stop::io_error);
    else
      finish(*zeros ? scan_stop::torn_tail : scan_stop::corrupt);
    return std::nullopt;
  };

  std::uint8_t h[record_header_size] = {};
  const ssize_t got = pread_full(io_, fd_, h, sizeof h, offset_);
  if (got < 0) {
    error_ = static_cast<int>(-got);
    finish(scan_stop::io_error);
    return std::nullopt;
  }
  const bool all_zero = std::all_of(h, h + got, [](std::uint8_t b) { return b == 0; });
  if (static_cast<std::size_t>(got) < sizeof h) {
    finish(all_zero ? scan_stop::zero_tail : scan_stop::torn_tail);
    return std::nullopt;
  }
  const std::uint32_t length = load_le32(h);
  if (length == 0) {
    auto zeros = zeros_from(offset_);
    if (!zeros) finish(scan_stop::io_error);
    else finish(*zeros ? scan_stop::zero_tail : scan_stop::corrupt);
    return std::nullopt;
  }
  const std::uint64_t end = offset_ + record_header_size + length;
  if (length > max_record_payload) return bad_record(offset_ + record_header_size);
  if (end > size_) {
    finish(scan_stop::torn_tail);  // the record runs past the end of the file
    return std::nullopt;
  }
  stored_record r;
  r.index = index_;
  r.offset = offset_;
  r.ingest_ts_ns = static_cast<std::int64_t>(load_le64(h + 8));
  r.payload.resize(length);
  const ssize_t body = pread_full(io_, fd_, r.payload.data(), length, offset_ + record_header_size);
  if (body < 0) {
    error_ = static_cast<int>(-body);
    finish(scan_stop::io_error);
    return std::nullopt;
  }
  if (static_cast<std::uint64_t>(body) != length || record_crc(r.ingest_ts_ns, r.payload) != load_le32(h + 4))
    return bad_record(end);
  offset_ = end;
  ++index_;
  return r;
}

}  // namespace weir::wab
