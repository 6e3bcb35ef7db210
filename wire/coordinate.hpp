#pragma once
// RecordCoordinate: where a tracked push landed, carried by AckTracked.
//
//   version u8 (1) | index u64 | record_id [32] | segment_len u16 (<= 255) | segment
//
// record_id = SHA-256(u64(seg_len) ++ seg ++ u64(index) ++ u64(payload_len) ++ payload),
// all integers little-endian. The drain hands the same value to the sink as the
// record's idempotency key.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "wire/bytes.hpp"
#include "wire/outcome.hpp"

namespace weir::wire {

inline constexpr std::uint8_t coordinate_version = 1;
inline constexpr std::size_t coordinate_fixed_size = 43;
inline constexpr std::size_t max_segment_name = 255;

using record_id = std::array<std::uint8_t, 32>;

struct record_coordinate {
  std::uint64_t index = 0;  // 1-based position of the record in its segment
  record_id id{};
  std::string segment;      // "<shard-dir>/<file>"
};

enum class coordinate_error : std::uint8_t {
  truncated,
  unsupported_version,
  segment_too_long,
  length_mismatch,
  segment_not_utf8,
};

std::string_view name_of(coordinate_error e);

record_id compute_record_id(std::string_view segment, std::uint64_t index, byte_span payload);
std::string to_hex(byte_span bytes);
/// Lowercase hex of `bytes` into `out`, reusing its storage.
void to_hex(byte_span bytes, std::string& out);

byte_buffer encode_coordinate(const record_coordinate& c);
outcome<record_coordinate, coordinate_error> decode_coordinate(byte_span payload);

byte_buffer encode_ack_tracked(const record_coordinate& c);

bool is_valid_utf8(std::string_view s);

}  // namespace weir::wire
