#include "wab/segment_reader.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace weir::wab {

namespace {

constexpr std::int64_t one_day_ns = 86'400'000'000'000;
/// A search reads the file in windows of this size.
constexpr std::size_t search_window = 64 * 1024;
/// Reading records, the file is read this much at a time.
constexpr std::size_t read_ahead = 256 * 1024;

}  // namespace

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

resync_window resync_window_for(const segment_header& header, std::int64_t now_ns) {
  return {header.created_at_ns - one_day_ns, std::max(now_ns, header.created_at_ns) + one_day_ns};
}

outcome<segment_header, header_error> read_segment_header(file_io& io, int fd) {
  std::uint8_t prefix[segment_prefix_size] = {};
  const ssize_t got = pread_full(io, fd, prefix, sizeof prefix, 0);
  return decode_segment_header(byte_span(prefix, got > 0 ? static_cast<std::size_t>(got) : 0));
}

bool seal_count_possible(const segment_header& header, const segment_seal& seal) {
  if (seal.data_end < header.data_start()) return false;
  return seal.records <= (seal.data_end - header.data_start()) / record_header_size;
}

std::optional<segment_seal> usable_seal(const segment_header& header, std::uint64_t file_size) {
  if (!header.seal || header.seal->data_end < header.data_start() || header.seal->data_end > file_size ||
      !seal_count_possible(header, *header.seal))
    return std::nullopt;
  return header.seal;
}

std::uint64_t records_end(const segment_header& header, std::uint64_t file_size) {
  const auto seal = usable_seal(header, file_size);
  return seal ? seal->data_end : file_size;
}

outcome<segment_extent, int> read_segment_extent(file_io& io, const std::string& path) {
  const int fd = io.open_existing(path);
  if (fd < 0) return fd;
  const std::int64_t size = io.size(fd);
  const auto header = read_segment_header(io, fd);
  io.close(fd);
  if (size < 0) return static_cast<int>(size);
  const auto file_size = static_cast<std::uint64_t>(size);
  // Too short for a header in a file long enough to hold one: the read failed.
  if (!header && header.error() == header_error::too_short && file_size >= segment_prefix_size) return -EIO;
  if (!header) return segment_extent{segment_header_size, file_size, std::nullopt};
  const std::uint64_t start = header.value().data_start();
  segment_extent extent{start, std::max(start, records_end(header.value(), file_size)), std::nullopt};
  if (const auto seal = usable_seal(header.value(), file_size)) extent.sealed_records = seal->records;
  return extent;
}

segment_reader::segment_reader(file_io& io, int fd, const segment_header& header, std::uint64_t end,
                               std::uint64_t start_offset, std::uint64_t start_index,
                               std::optional<resync_window> resync)
    : io_(io),
      fd_(fd),
      crc_seed_(header.crc_seed()),
      size_(end),
      offset_(std::max(start_offset, header.data_start())),
      index_(start_index),
      resync_(resync),
      // Plausible-looking garbage is rare, but a file crafted to be full of it
      // must not make a search quadratic: past this much CRC work, give up.
      search_budget_(4 * end + 64ull * 1024 * 1024) {}

segment_reader::~segment_reader() {
  if (buffer_ != &own_buffer_ && buffer_->capacity > read_ahead) *buffer_ = read_ahead_buffer{};
}

byte_span segment_reader::bytes_at(std::uint64_t at, std::size_t n) {
  const std::uint64_t want_end = std::min<std::uint64_t>(at + n, size_);
  if (at >= want_end) return {};
  if (at >= buffer_at_ && want_end <= buffer_at_ + buffer_size_)
    return byte_span(buffer_->bytes.get() + (at - buffer_at_), static_cast<std::size_t>(want_end - at));
  const auto fill = static_cast<std::size_t>(std::min<std::uint64_t>(std::max(n, read_ahead), size_ - at));
  if (buffer_->capacity < fill) {
    // A lent buffer grows to the read-ahead at once: small first reads would
    // otherwise replace it again and again as the reads grow.
    const std::size_t capacity = buffer_ == &own_buffer_ ? fill : std::max(fill, read_ahead);
    buffer_->bytes = std::make_unique_for_overwrite<std::uint8_t[]>(capacity);
    buffer_->capacity = capacity;
  }
  buffer_at_ = at;
  buffer_size_ = 0;
  const ssize_t got = pread_full(io_, fd_, buffer_->bytes.get(), fill, at);
  if (got < 0) {
    error_ = static_cast<int>(-got);
    return {};
  }
  buffer_size_ = static_cast<std::size_t>(got);
  return byte_span(buffer_->bytes.get(), std::min(buffer_size_, static_cast<std::size_t>(want_end - at)));
}

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

std::optional<byte_span> segment_reader::checked_payload(std::uint64_t at, const header_fields& h) {
  const byte_span payload = bytes_at(at + record_header_size, h.length);
  if (error_ != 0 || payload.size() != h.length || record_crc(crc_seed_, h.ts, payload) != h.crc) return std::nullopt;
  return payload;
}

std::optional<std::uint64_t> segment_reader::find_next_record(std::uint64_t from) {
  std::vector<std::uint8_t> window;
  std::uint64_t window_at = 0;
  // The smallest record is a header and one byte.
  for (std::uint64_t at = from; at + record_header_size < size_; ++at) {
    if (at < window_at || at + record_header_size > window_at + window.size()) {
      window_at = at;
      window.resize(static_cast<std::size_t>(std::min<std::uint64_t>(search_window, size_ - at)));
      const ssize_t got = pread_full(io_, fd_, window.data(), window.size(), at);
      if (got < 0) {
        error_ = static_cast<int>(-got);
        return std::nullopt;
      }
      window.resize(static_cast<std::size_t>(got));
      if (window.size() < record_header_size) return std::nullopt;
    }
    const std::uint8_t* h = window.data() + (at - window_at);
    const header_fields f{load_le32(h), load_le32(h + 4), static_cast<std::int64_t>(load_le64(h + 8))};
    if (f.length == 0) {
      // No record starts where its length would be four zero bytes: step
      // to the first offset whose length has a non-zero byte, so a long
      // zero-filled stretch (a preallocated segment's unwritten rest) is
      // passed at memory speed, not tried byte by byte.
      // (The loop's step then lands on the first offset whose four length
      // bytes include that non-zero byte.)
      const std::uint8_t* end = window.data() + window.size();
      const std::uint8_t* nonzero = std::find_if(h + 4, end, [](std::uint8_t b) { return b != 0; });
      at = window_at + static_cast<std::uint64_t>(nonzero - window.data()) - 4;
      continue;
    }
    if (f.length > max_record_payload || at + record_header_size + f.length > size_) continue;
    if (f.ts < resync_->min_ts_ns || f.ts > resync_->max_ts_ns) continue;
    if (f.length > search_budget_) return std::nullopt;
    search_budget_ -= f.length;
    if (checked_payload(at, f)) return at;
    if (error_ != 0) return std::nullopt;
  }
  return std::nullopt;
}

bool segment_reader::skip_damage(std::uint64_t next, const header_fields& bad, stored_record* out) {
  ++damaged_;
  if (!first_damage_) first_damage_ = offset_;
  bool recovered = false;
  // Only the length may be wrong: the gap up to the next record is then the
  // payload, and the record's own CRC says whether that is so.
  const std::uint64_t gap = next - offset_;
  if (gap > record_header_size && gap - record_header_size <= max_record_payload) {
    header_fields inferred = bad;
    inferred.length = static_cast<std::uint32_t>(gap - record_header_size);
    if (auto payload = checked_payload(offset_, inferred)) {
      ++recovered_;
      ++returned_;
      take(out, bad.ts, *payload);
      recovered = true;
    }
  }
  ++index_;
  offset_ = next;
  return recovered;
}

void segment_reader::take(stored_record* out, std::int64_t ts, byte_span payload) const {
  if (!out) return;
  out->index = index_;
  out->offset = offset_;
  out->ingest_ts_ns = ts;
  out->payload.assign(payload.begin(), payload.end());
}

void segment_reader::stop_at_bad_record(std::uint64_t checked_up_to, bool zero_length) {
  // Zeros from here to the end mean the final write never completed (or a
  // zero-filled tail); anything else is damage in the middle.
  if (!zero_length && checked_up_to >= size_) return finish(scan_stop::torn_tail);
  auto zeros = zeros_from(zero_length ? offset_ : checked_up_to);
  if (!zeros) return finish(scan_stop::io_error);
  if (zero_length) return finish(*zeros ? scan_stop::zero_tail : scan_stop::corrupt);
  finish(*zeros ? scan_stop::torn_tail : scan_stop::corrupt);
}

std::optional<stored_record> segment_reader::next() {
  stored_record r;
  if (!read_next(&r)) return std::nullopt;
  return r;
}

bool segment_reader::read_next(stored_record* out) {
  while (stop_ == scan_stop::none) {
    if (offset_ >= size_) {
      finish(scan_stop::end_of_file);
      break;
    }
    const byte_span header = bytes_at(offset_, record_header_size);
    if (error_ != 0) {
      finish(scan_stop::io_error);
      break;
    }
    if (header.size() < record_header_size) {
      // Too short for any record: nothing to search.
      finish(std::all_of(header.begin(), header.end(), [](std::uint8_t b) { return b == 0; }) ? scan_stop::zero_tail
                                                                                            : scan_stop::torn_tail);
      break;
    }
    const std::uint8_t* h = header.data();
    const header_fields f{load_le32(h), load_le32(h + 4), static_cast<std::int64_t>(load_le64(h + 8))};
    const std::uint64_t end = offset_ + record_header_size + f.length;
    const bool plausible = f.length != 0 && f.length <= max_record_payload && end <= size_;
    if (plausible) {
      auto payload = checked_payload(offset_, f);
      if (payload) {
        take(out, f.ts, *payload);
        offset_ = end;
        ++index_;
        ++returned_;
        return true;
      }
      if (error_ != 0) {
        finish(scan_stop::io_error);
        break;
      }
    }
    if (resync_) {
      const auto next_good = find_next_record(offset_ + 1);
      if (error_ != 0) {
        finish(scan_stop::io_error);
        break;
      }
      if (next_good) {
        if (skip_damage(*next_good, f, out)) return true;
        continue;
      }
    }
    stop_at_bad_record(f.length > max_record_payload ? offset_ + record_header_size : end, f.length == 0);
  }
  return false;
}

std::optional<segment_seal> believable_seal(file_io& io, int fd, const segment_header& header, std::uint64_t file_size) {
  const auto seal = usable_seal(header, file_size);
  if (!seal || seal->data_end + record_header_size > file_size) return seal;
  segment_reader reader(io, fd, header, file_size, seal->data_end, 1, std::nullopt);
  stored_record r;
  if (reader.next(r) && r.offset == seal->data_end) return std::nullopt;
  return seal;
}

}  // namespace weir::wab
