#pragma once
// The bytes of a WAB segment file (docs/wab_format.md).
//
//   header, 32 bytes:  "WWAB" | version u8 (1) | flags u8 (0) | shard u16 |
//                      sequence u64 | created_at_ns i64 | reserved u32 (0) |
//                      crc32 of bytes [0, 28)
//   record:            length u32 (>= 1) | crc32 of bytes [8, 16 + length) |
//                      ingest_ts_ns i64 | payload (length bytes)
//
// A length of zero is never a record: zero bytes where a record header would
// start mean "no more records" (a clean end or a zero-filled tail).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "messages/wire/bytes.hpp"
#include "messages/wire/outcome.hpp"

namespace weir::wab {

inline constexpr std::size_t segment_header_size = 32;
inline constexpr std::size_t record_header_size = 16;
inline constexpr std::uint8_t segment_version = 1;
inline constexpr std::uint32_t max_record_payload = 16u * 1024 * 1024;

struct segment_header {
  std::uint16_t shard = 0;
  std::uint64_t sequence = 0;
  std::int64_t created_at_ns = 0;
};

enum class header_error { too_short, bad_magic, unsupported_version, bad_crc };
std::string_view name_of(header_error e);

std::array<std::uint8_t, segment_header_size> encode_segment_header(const segment_header& h);
outcome<segment_header, header_error> decode_segment_header(byte_span bytes);

/// Appends one record in its on-disk form.
void append_record(byte_buffer& out, std::int64_t ingest_ts_ns, byte_span payload);
/// CRC a record header must carry for this timestamp and payload.
std::uint32_t record_crc(std::int64_t ingest_ts_ns, byte_span payload);

/// "shard_03"
std::string shard_dir_name(std::uint16_t shard);
/// "seg_00000001.wab"
std::string segment_file_name(std::uint64_t sequence);
/// The sequence number in a segment file name; nullopt for any other name.
std::optional<std::uint64_t> parse_segment_file_name(std::string_view name);

}  // namespace weir::wab
