#include "wire/frame.hpp"

#include <algorithm>

namespace weir::wire {

namespace {

constexpr std::uint8_t magic[4] = {'W', 'E', 'I', 'R'};

bool known_type(std::uint8_t b) { return b >= 0x01 && b <= 0x09; }
bool known_durability(std::uint8_t b) { return b >= 0x01 && b <= 0x04; }

}  // namespace

tier tier_of(durability d) {
  switch (d) {
    case durability::buffered: return tier::buffered;
    case durability::replicated: return tier::replicated;
    case durability::durable:
    case durability::batched: break;
  }
  return tier::durable;
}

bool is_push(message_type t) {
  return t == message_type::push || t == message_type::push_tracked ||
         t == message_type::push_batch;
}

std::string_view name_of(frame_error e) {
  switch (e) {
    case frame_error::truncated_frame: return "TruncatedFrame";
    case frame_error::trailing_bytes: return "TrailingBytes";
    case frame_error::bad_magic: return "BadMagic";
    case frame_error::version_mismatch: return "VersionMismatch";
    case frame_error::header_crc_mismatch: return "HeaderCrcMismatch";
    case frame_error::unknown_message_type: return "UnknownMessageType";
    case frame_error::unknown_durability: return "UnknownDurability";
    case frame_error::reserved_flags_set: return "ReservedFlagsSet";
    case frame_error::payload_too_large: return "PayloadTooLarge";
    case frame_error::empty_payload: return "EmptyPayload";
    case frame_error::payload_crc_mismatch: return "PayloadCrcMismatch";
  }
  return "?";
}

std::string_view name_of(nack_reason r) {
  switch (r) {
    case nack_reason::bad_magic: return "BadMagic";
    case nack_reason::version_mismatch: return "VersionMismatch";
    case nack_reason::bad_header_crc: return "BadHeaderCrc";
    case nack_reason::payload_too_large: return "PayloadTooLarge";
    case nack_reason::bad_payload_crc: return "BadPayloadCrc";
    case nack_reason::internal_error: return "InternalError";
    case nack_reason::empty_payload: return "EmptyPayload";
    case nack_reason::unknown_message: return "UnknownMessage";
    case nack_reason::reserved_flags_set: return "ReservedFlagsSet";
    case nack_reason::bad_batch_framing: return "BadBatchFraming";
  }
  return "?";
}

std::string_view name_of(message_type t) {
  switch (t) {
    case message_type::push: return "Push";
    case message_type::ack: return "Ack";
    case message_type::nack: return "Nack";
    case message_type::health_check: return "HealthCheck";
    case message_type::health_check_response: return "HealthCheckResponse";
    case message_type::push_tracked: return "PushTracked";
    case message_type::ack_tracked: return "AckTracked";
    case message_type::push_batch: return "PushBatch";
    case message_type::ack_batch: return "AckBatch";
  }
  return "?";
}

std::string_view name_of(tier t) {
  switch (t) {
    case tier::buffered: return "buffered";
    case tier::durable: return "durable";
    case tier::replicated: return "replicated";
  }
  return "?";
}

std::optional<nack_reason> nack_for(frame_error e) {
  switch (e) {
    case frame_error::bad_magic: return nack_reason::bad_magic;
    case frame_error::version_mismatch: return nack_reason::version_mismatch;
    case frame_error::header_crc_mismatch: return nack_reason::bad_header_crc;
    case frame_error::unknown_message_type:
    case frame_error::unknown_durability: return nack_reason::unknown_message;
    case frame_error::reserved_flags_set: return nack_reason::reserved_flags_set;
    case frame_error::payload_too_large: return nack_reason::payload_too_large;
    case frame_error::empty_payload: return nack_reason::empty_payload;
    case frame_error::payload_crc_mismatch: return nack_reason::bad_payload_crc;
    case frame_error::truncated_frame:
    case frame_error::trailing_bytes: break;
  }
  return std::nullopt;
}

outcome<frame_header, frame_error> decode_header(byte_span h, std::uint32_t payload_cap) {
  if (h.size() < header_size) return frame_error::truncated_frame;
  if (!std::equal(magic, magic + 4, h.data())) return frame_error::bad_magic;
  if (h[4] != protocol_version) return frame_error::version_mismatch;
  if (crc32_of(h.first(12)) != load_le32(h.data() + 12)) return frame_error::header_crc_mismatch;
  if (!known_type(h[5])) return frame_error::unknown_message_type;
  if (!known_durability(h[6])) return frame_error::unknown_durability;
  if (h[7] != 0) return frame_error::reserved_flags_set;
  frame_header out{static_cast<message_type>(h[5]), static_cast<durability>(h[6]), h[7],
                   load_le32(h.data() + 8)};
  if (out.payload_len > std::min(payload_cap, payload_hard_cap)) return frame_error::payload_too_large;
  if (out.payload_len == 0 && is_push(out.type)) return frame_error::empty_payload;
  return out;
}

outcome<frame_view, frame_error> decode_frame(byte_span buffer, std::uint32_t payload_cap) {
  auto header = decode_header(buffer, payload_cap);
  if (!header) return header.error();
  const std::size_t need = header_size + header.value().payload_len + payload_crc_size;
  if (buffer.size() < need) return frame_error::truncated_frame;
  if (buffer.size() > need) return frame_error::trailing_bytes;
  byte_span payload = buffer.subspan(header_size, header.value().payload_len);
  if (crc32_of(payload) != load_le32(buffer.data() + header_size + payload.size()))
    return frame_error::payload_crc_mismatch;
  return frame_view{header.value(), payload};
}

void append_frame(byte_buffer& out, message_type type, durability dur, byte_span payload) {
  const std::size_t at = out.size();
  out.resize(at + header_size);
  std::uint8_t* h = out.data() + at;
  std::copy(magic, magic + 4, h);
  h[4] = protocol_version;
  h[5] = static_cast<std::uint8_t>(type);
  h[6] = static_cast<std::uint8_t>(dur);
  h[7] = 0;
  store_le32(h + 8, static_cast<std::uint32_t>(payload.size()));
  store_le32(h + 12, crc32_of(byte_span(h, 12)));
  append_bytes(out, payload);
  append_le32(out, crc32_of(payload));
}

byte_buffer encode_frame(message_type type, durability dur, byte_span payload) {
  byte_buffer out;
  out.reserve(header_size + payload.size() + payload_crc_size);
  append_frame(out, type, dur, payload);
  return out;
}

byte_buffer encode_ack() { return encode_frame(message_type::ack, durability::durable, {}); }

byte_buffer encode_nack(nack_reason reason) {
  std::uint8_t body[2] = {static_cast<std::uint8_t>(reason), protocol_version};
  // Only VersionMismatch carries a second byte: the version this daemon speaks.
  const std::size_t n = reason == nack_reason::version_mismatch ? 2 : 1;
  return encode_frame(message_type::nack, durability::durable, byte_span(body, n));
}

byte_buffer encode_health_check_response() {
  return encode_frame(message_type::health_check_response, durability::durable, {});
}

}  // namespace weir::wire
