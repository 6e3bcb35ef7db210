#pragma once
// PushBatch body and AckBatch bitmap.
//
//   PushBatch body: version u8 (1) | count u16 | count x (len u32 >= 1, bytes)
//   AckBatch body:  version u8 (1) | count u16 | ceil(count/8) bitmap bytes
//
// Bit i of the bitmap is byte i/8, mask 1 << (i%8). A set bit means "durable
// at the requested tier"; a clear bit means "not durable as of this reply".
#include <cstdint>
#include <string_view>
#include <vector>

#include "wire/bytes.hpp"
#include "wire/frame.hpp"
#include "wire/outcome.hpp"

namespace weir::wire {

inline constexpr std::uint8_t batch_version = 1;
inline constexpr std::size_t batch_header_size = 3;
inline constexpr std::uint16_t batch_records_hard_cap = 2048;

enum class batch_error : std::uint8_t {
  truncated,
  unsupported_version,
  empty_batch,
  too_many_records,
  empty_record,
  record_too_large,
  truncated_record,
  length_mismatch,
  padding_not_zero,
};

std::string_view name_of(batch_error e);

/// The Nack a daemon answers a bad PushBatch body with.
nack_reason nack_for(batch_error e);

/// Validates the whole body before returning any record: the count against
/// min(max_records, hard cap) before anything is sized by it, each length
/// against `record_cap` before the body is consulted.
outcome<std::vector<byte_span>, batch_error> decode_batch_body(byte_span body,
                                                              std::uint32_t max_records,
                                                              std::uint32_t record_cap);
byte_buffer encode_batch_body(const std::vector<byte_span>& records);

/// `expected` is the record count of the batch this reply answers.
outcome<std::vector<bool>, batch_error> decode_ack_batch(byte_span body, std::size_t expected);
byte_buffer encode_ack_batch_body(const std::vector<bool>& accepted);
byte_buffer encode_ack_batch(const std::vector<bool>& accepted);

}  // namespace weir::wire
