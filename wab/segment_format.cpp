#include "wab/segment_format.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace weir::wab {

namespace {
constexpr std::uint8_t magic[4] = {'W', 'W', 'A', 'B'};
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

std::array<std::uint8_t, segment_header_size> encode_segment_header(const segment_header& h) {
  std::array<std::uint8_t, segment_header_size> out{};
  std::copy(magic, magic + 4, out.begin());
  out[4] = segment_version;
  out[5] = 0;
  store_le16(out.data() + 6, h.shard);
  store_le64(out.data() + 8, h.sequence);
  store_le64(out.data() + 16, static_cast<std::uint64_t>(h.created_at_ns));
  store_le32(out.data() + 28, crc32_of(byte_span(out.data(), 28)));
  return out;
}

outcome<segment_header, header_error> decode_segment_header(byte_span b) {
  if (b.size() < segment_header_size) return header_error::too_short;
  if (!std::equal(magic, magic + 4, b.data())) return header_error::bad_magic;
  if (b[4] != segment_version) return header_error::unsupported_version;
  if (crc32_of(b.first(28)) != load_le32(b.data() + 28)) return header_error::bad_crc;
  return segment_header{load_le16(b.data() + 6), load_le64(b.data() + 8),
                        static_cast<std::int64_t>(load_le64(b.data() + 16))};
}

std::uint32_t record_crc(std::int64_t ingest_ts_ns, byte_span payload) {
  std::uint8_t ts[8];
  store_le64(ts, static_cast<std::uint64_t>(ingest_ts_ns));
  return crc32_of(payload, crc32_of(byte_span(ts, 8)));
}

void append_record(byte_buffer& out, std::int64_t ingest_ts_ns, byte_span payload) {
  append_le32(out, static_cast<std::uint32_t>(payload.size()));
  append_le32(out, record_crc(ingest_ts_ns, payload));
  append_le64(out, static_cast<std::uint64_t>(ingest_ts_ns));
  append_bytes(out, payload);
}

std::string shard_dir_name(std::uint16_t shard) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "shard_%02u", static_cast<unsigned>(shard));
  return buf;
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

}  // namespace weir::wab
