#pragma once
// The bytes of a WAB segment file (docs/wab_format.md).
//
//   header, 32 bytes:  "WWAB" | version u8 | flags u8 (0) | shard u16 |
//                      sequence u64 | created_at_ns i64 | reserved u32 (0) |
//                      crc32 of bytes [0, 28)
//   seal slot (v2), 32 bytes at offset 32, zero until the segment is sealed:
//                      "SEAL" | reserved u32 | records u64 | data_end u64 |
//                      reserved u32 | crc32 of (sequence, bytes [32, 60))
//   record:            length u32 (>= 1) | crc32 | ingest_ts_ns i64 |
//                      payload (length bytes)
//
// Records start at 32 in a version-1 file and at 64 in a version-2 one. A
// record's CRC covers bytes [8, 16 + length); in version 2 it starts from the
// segment's sequence number, so that a file reused for a later segment can
// never show a record of its earlier life as valid. A length of zero is never
// a record: zero bytes where a record header would start mean "no more records".
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wire/bytes.hpp"
#include "wire/outcome.hpp"

namespace weir::wab {

inline constexpr std::size_t segment_header_size = 32;
inline constexpr std::size_t seal_size = 32;
/// Bytes read to know a segment: its header and, in version 2, its seal slot.
inline constexpr std::size_t segment_prefix_size = segment_header_size + seal_size;
inline constexpr std::size_t record_header_size = 16;
/// The version written; version 1 is still read.
inline constexpr std::uint8_t segment_version = 2;
inline constexpr std::uint32_t max_record_payload = 16u * 1024 * 1024;

/// Written in place once everything before data_end is synced: a sealed
/// segment's extent is known without reading its records.
struct segment_seal {
  std::uint64_t records = 0;
  std::uint64_t data_end = 0;  // just past the last record
  bool operator==(const segment_seal&) const = default;
};

struct segment_header {
  std::uint16_t shard = 0;
  std::uint64_t sequence = 0;
  std::int64_t created_at_ns = 0;
  std::uint8_t version = segment_version;
  std::optional<segment_seal> seal = std::nullopt;  // version 2 only, once sealed

  /// Offset of the first record.
  std::uint64_t data_start() const { return version == 1 ? segment_header_size : segment_prefix_size; }
  /// Where every record CRC of this segment starts.
  std::uint32_t crc_seed() const;
};

enum class header_error { too_short, bad_magic, unsupported_version, bad_crc };
std::string_view name_of(header_error e);

/// The first bytes of a new segment: its header and an empty seal slot.
std::array<std::uint8_t, segment_prefix_size> encode_segment_prefix(const segment_header& h);
/// The seal slot (offset segment_header_size) of segment `sequence`.
std::array<std::uint8_t, seal_size> encode_seal(std::uint64_t sequence, const segment_seal& s);
/// Decodes a header from the first bytes of a file (segment_prefix_size of
/// them for version 2). A seal slot that does not check — never written, or
/// torn — leaves the segment unsealed.
outcome<segment_header, header_error> decode_segment_header(byte_span bytes);

/// Appends one record in its on-disk form.
void append_record(byte_buffer& out, std::uint32_t crc_seed, std::int64_t ingest_ts_ns, byte_span payload);
/// CRC a record header must carry for this seed, timestamp and payload.
std::uint32_t record_crc(std::uint32_t crc_seed, std::int64_t ingest_ts_ns, byte_span payload);

/// The offsets just past each record of `framed`, when it holds nothing but
/// whole records that check against `crc_seed` (a replica receiving its
/// origin's bytes); nullopt otherwise.
std::optional<std::vector<std::uint64_t>> check_framed_records(byte_span framed, std::uint32_t crc_seed);

/// "shard_03"
std::string shard_dir_name(std::uint16_t shard);
/// 7 for "shard_07" (or "shard_7"); nullopt for any other name, or past 65535.
std::optional<std::uint16_t> parse_shard_dir_name(std::string_view name);
/// "seg_00000001.wab"
std::string segment_file_name(std::uint64_t sequence);
/// The sequence number in a segment file name; nullopt for any other name.
std::optional<std::uint64_t> parse_segment_file_name(std::string_view name);

}  // namespace weir::wab
