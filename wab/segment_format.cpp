#include "wab/segment_format.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace weir::wab {

namespace {
constexpr std::uint8_t magic[4] = {'W', 'W', 'A', 'B'};
constexpr std::uint8_t seal_magic[4] = {'S', 'E', 'A', 'L'};
}

std::string_view name_of(header_error e) {
  switch (e) {
    case header_error::too_short: return "header too short";
    case header_error::bad_magic: return "bad magic";
    case header_error::unsupported_version: return "unsupported version";
    case header_error::bad_crc: return "header CRC mismatch";
  }
  return "?";
}

namespace {

std::uint32_t sequence_crc(std::uint64_t sequence) {
  std::uint8_t seq[8];
  store_le64(seq, sequence);
  return crc32_of(byte_span(seq, 8));
}

std::optional<segment_seal> decode_seal(std::uint64_t sequence, byte_span b) {
  if (!std::equal(seal_magic, seal_magic + 4, b.data())) return std::nullopt;
  if (crc32_of(b.first(28), sequence_crc(sequence)) != load_le32(b.data() + 28)) return std::nullopt;
  return segment_seal{load_le64(b.data() + 8), load_le64(b.data() + 16)};
}

}  // namespace

std::uint32_t segment_header::crc_seed() const { return version == 1 ? 0 : sequence_crc(sequence); }

std::array<std::uint8_t, segment_prefix_size> encode_segment_prefix(const segment_header& h) {
  std::array<std::uint8_t, segment_prefix_size> out{};
  std::copy(magic, magic + 4, out.begin());
  out[4] = segment_version;
  out[5] = 0;
  store_le16(out.data() + 6, h.shard);
  store_le64(out.data() + 8, h.sequence);
  store_le64(out.data() + 16, static_cast<std::uint64_t>(h.created_at_ns));
  store_le32(out.data() + 28, crc32_of(byte_span(out.data(), 28)));
  return out;
}

std::array<std::uint8_t, seal_size> encode_seal(std::uint64_t sequence, const segment_seal& s) {
  std::array<std::uint8_t, seal_size> out{};
  std::copy(seal_magic, seal_magic + 4, out.begin());
  store_le64(out.data() + 8, s.records);
  store_le64(out.data() + 16, s.data_end);
  store_le32(out.data() + 28, crc32_of(byte_span(out.data(), 28), sequence_crc(sequence)));
  return out;
}

outcome<segment_header, header_error> decode_segment_header(byte_span b) {
  if (b.size() < segment_header_size) return header_error::too_short;
  if (!std::equal(magic, magic + 4, b.data())) return header_error::bad_magic;
  const std::uint8_t version = b[4];
  if (version != 1 && version != 2) return header_error::unsupported_version;
  if (crc32_of(b.first(28)) != load_le32(b.data() + 28)) return header_error::bad_crc;
  segment_header h{load_le16(b.data() + 6), load_le64(b.data() + 8),
                   static_cast<std::int64_t>(load_le64(b.data() + 16)), version, std::nullopt};
  if (version == 2) {
    // A version-2 file is created with its header and seal slot in one write.
    if (b.size() < segment_prefix_size) return header_error::too_short;
    h.seal = decode_seal(h.sequence, b.subspan(segment_header_size, seal_size));
  }
  return h;
}

std::uint32_t record_crc(std::uint32_t crc_seed, std::int64_t ingest_ts_ns, byte_span payload) {
  std::uint8_t ts[8];
  store_le64(ts, static_cast<std::uint64_t>(ingest_ts_ns));
  return crc32_of(payload, crc32_of(byte_span(ts, 8), crc_seed));
}

void append_record(byte_buffer& out, std::uint32_t crc_seed, std::int64_t ingest_ts_ns, byte_span payload) {
  append_le32(out, static_cast<std::uint32_t>(payload.size()));
  append_le32(out, record_crc(crc_seed, ingest_ts_ns, payload));
  append_le64(out, static_cast<std::uint64_t>(ingest_ts_ns));
  append_bytes(out, payload);
}

std::string shard_dir_name(std::uint16_t shard) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "shard_%02u", static_cast<unsigned>(shard));
  return buf;
}

std::optional<std::uint16_t> parse_shard_dir_name(std::string_view name) {
  constexpr std::string_view prefix = "shard_";
  if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) return std::nullopt;
  unsigned long n = 0;
  for (char c : name.substr(prefix.size())) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<unsigned long>(c - '0');
    if (n > 0xffff) return std::nullopt;
  }
  return static_cast<std::uint16_t>(n);
}

std::string segment_file_name(std::uint64_t sequence) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "seg_%08llu.wab", static_cast<unsigned long long>(sequence));
  return buf;
}

std::optional<std::uint64_t> parse_segment_file_name(std::string_view name) {
  constexpr std::string_view prefix = "seg_", suffix = ".wab";
  if (name.size() < prefix.size() + 8 + suffix.size() || name.substr(0, prefix.size()) != prefix ||
      name.substr(name.size() - suffix.size()) != suffix)
    return std::nullopt;
  const std::string_view digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc{} || end != digits.data() + digits.size() || v == 0) return std::nullopt;
  return v;
}

std::optional<std::vector<std::uint64_t>> check_framed_records(byte_span framed, std::uint32_t crc_seed) {
  std::vector<std::uint64_t> ends;
  std::size_t at = 0;
  while (at < framed.size()) {
    if (framed.size() - at < record_header_size) return std::nullopt;
    const std::uint32_t length = load_le32(framed.data() + at);
    const std::uint32_t crc = load_le32(framed.data() + at + 4);
    const auto ts = static_cast<std::int64_t>(load_le64(framed.data() + at + 8));
    if (length == 0 || length > max_record_payload || framed.size() - at - record_header_size < length)
      return std::nullopt;
    if (record_crc(crc_seed, ts, framed.subspan(at + record_header_size, length)) != crc) return std::nullopt;
    at += record_header_size + length;
    ends.push_back(at);
  }
  return ends;
}

}  // namespace weir::wab
