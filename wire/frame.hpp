#pragma once
// The weir v1 frame: a 16-byte header, the payload, and a CRC of the payload.
//
//   0  magic "WEIR"        8  payload_len u32 LE
//   4  version (1)        12  CRC-32 of bytes [0, 12)
//   5  message_type       16  payload (payload_len bytes)
//   6  durability          .. CRC-32 of the payload (0 when empty)
//   7  flags (0)
//
// Decoding follows the order the protocol mandates, so that every malformed
// frame gets one specific verdict: length, magic, version, header CRC, type,
// durability, flags, payload cap, empty payload, then payload and its CRC.
#include <cstdint>
#include <optional>
#include <string_view>

#include "wire/bytes.hpp"
#include "wire/outcome.hpp"

namespace weir::wire {

inline constexpr std::uint8_t protocol_version = 1;
inline constexpr std::size_t header_size = 16;
inline constexpr std::size_t payload_crc_size = 4;
inline constexpr std::uint32_t payload_hard_cap = 16u * 1024 * 1024;

enum class message_type : std::uint8_t {
  push = 0x01,
  ack = 0x02,
  nack = 0x03,
  health_check = 0x04,
  health_check_response = 0x05,
  push_tracked = 0x06,
  ack_tracked = 0x07,
  push_batch = 0x08,
  ack_batch = 0x09,
};

/// The durability byte as sent. 0x02 is the retired "Batched" tier and is
/// honoured as Durable; 0x04 is this project's cluster extension.
enum class durability : std::uint8_t {
  durable = 0x01,
  batched = 0x02,
  buffered = 0x03,
  replicated = 0x04,
};

/// The promise an ack makes, after folding the retired byte into Durable.
enum class tier : std::uint8_t { buffered, durable, replicated };

enum class nack_reason : std::uint8_t {
  bad_magic = 0x01,
  version_mismatch = 0x02,
  bad_header_crc = 0x03,
  payload_too_large = 0x04,
  bad_payload_crc = 0x05,
  internal_error = 0x06,
  empty_payload = 0x07,
  unknown_message = 0x08,
  reserved_flags_set = 0x09,
  bad_batch_framing = 0x0b,
};

/// Every way a byte buffer can fail to be exactly one valid frame.
enum class frame_error : std::uint8_t {
  truncated_frame,
  trailing_bytes,
  bad_magic,
  version_mismatch,
  header_crc_mismatch,
  unknown_message_type,
  unknown_durability,
  reserved_flags_set,
  payload_too_large,
  empty_payload,
  payload_crc_mismatch,
};

struct frame_header {
  message_type type;
  durability dur;
  std::uint8_t flags;
  std::uint32_t payload_len;
};

struct frame_view {
  frame_header header;
  byte_span payload;
};

tier tier_of(durability d);
bool is_push(message_type t);
std::string_view name_of(frame_error e);
std::string_view name_of(nack_reason r);
std::string_view name_of(message_type t);
std::string_view name_of(tier t);

/// The Nack a daemon answers a header or frame error with. Truncation and
/// trailing bytes have no Nack: on a stream they mean "wait for more bytes".
std::optional<nack_reason> nack_for(frame_error e);

/// Validates the 16 header bytes. `payload_cap` is the effective cap
/// (min(configured, hard cap)); nothing is allocated here.
outcome<frame_header, frame_error> decode_header(byte_span header, std::uint32_t payload_cap);

/// Decodes a buffer that must hold exactly one frame.
outcome<frame_view, frame_error> decode_frame(byte_span buffer,
                                              std::uint32_t payload_cap = payload_hard_cap);

/// Appends one complete frame to `out`.
void append_frame(byte_buffer& out, message_type type, durability dur, byte_span payload);
byte_buffer encode_frame(message_type type, durability dur, byte_span payload);

// Daemon replies. Their durability byte is filler (0x01) and promises nothing.
byte_buffer encode_ack();
byte_buffer encode_nack(nack_reason reason);
byte_buffer encode_health_check_response();

}  // namespace weir::wire
