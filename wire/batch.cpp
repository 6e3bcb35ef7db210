#include "wire/batch.hpp"

#include <algorithm>

namespace weir::wire {

std::string_view name_of(batch_error e) {
  switch (e) {
    case batch_error::truncated: return "Truncated";
    case batch_error::unsupported_version: return "UnsupportedVersion";
    case batch_error::empty_batch: return "EmptyBatch";
    case batch_error::too_many_records: return "TooManyRecords";
    case batch_error::empty_record: return "EmptyRecord";
    case batch_error::record_too_large: return "RecordTooLarge";
    case batch_error::truncated_record: return "TruncatedRecord";
    case batch_error::length_mismatch: return "LengthMismatch";
    case batch_error::padding_not_zero: return "PaddingNotZero";
  }
  return "?";
}

nack_reason nack_for(batch_error e) {
  switch (e) {
    case batch_error::empty_record: return nack_reason::empty_payload;
    case batch_error::too_many_records:
    case batch_error::record_too_large: return nack_reason::payload_too_large;
    default: return nack_reason::bad_batch_framing;
  }
}

outcome<std::vector<byte_span>, batch_error> decode_batch_body(byte_span body,
                                                              std::uint32_t max_records,
                                                              std::uint32_t record_cap) {
  if (body.size() < batch_header_size) return batch_error::truncated;
  if (body[0] != batch_version) return batch_error::unsupported_version;
  const std::uint32_t count = load_le16(body.data() + 1);
  if (count == 0) return batch_error::empty_batch;
  if (count > std::min<std::uint32_t>(max_records, batch_records_hard_cap))
    return batch_error::too_many_records;
  record_cap = std::min(record_cap, payload_hard_cap);

  std::vector<byte_span> records;
  records.reserve(count);
  byte_span rest = body.subspan(batch_header_size);
  for (std::uint32_t i = 0; i < count; ++i) {
    if (rest.empty()) return batch_error::length_mismatch;  // fewer records than declared
    if (rest.size() < 4) return batch_error::truncated_record;
    const std::uint32_t len = load_le32(rest.data());
    if (len == 0) return batch_error::empty_record;
    if (len > record_cap) return batch_error::record_too_large;
    rest = rest.subspan(4);
    if (len > rest.size()) return batch_error::truncated_record;
    records.push_back(rest.first(len));
    rest = rest.subspan(len);
  }
  if (!rest.empty()) return batch_error::length_mismatch;  // more bytes than declared
  return records;
}

byte_buffer encode_batch_body(const std::vector<byte_span>& records) {
  byte_buffer out;
  out.push_back(batch_version);
  append_le16(out, static_cast<std::uint16_t>(records.size()));
  for (auto r : records) {
    append_le32(out, static_cast<std::uint32_t>(r.size()));
    append_bytes(out, r);
  }
  return out;
}

outcome<std::vector<bool>, batch_error> decode_ack_batch(byte_span body, std::size_t expected) {
  if (body.size() < batch_header_size) return batch_error::truncated;
  if (body[0] != batch_version) return batch_error::unsupported_version;
  const std::size_t count = load_le16(body.data() + 1);
  if (count == 0) return batch_error::empty_batch;
  if (count != expected) return batch_error::length_mismatch;
  if (body.size() != batch_header_size + (count + 7) / 8) return batch_error::length_mismatch;
  const std::uint8_t* bitmap = body.data() + batch_header_size;
  if (count % 8 != 0 && (bitmap[count / 8] >> (count % 8)) != 0) return batch_error::padding_not_zero;
  std::vector<bool> accepted(count);
  for (std::size_t i = 0; i < count; ++i) accepted[i] = (bitmap[i / 8] >> (i % 8)) & 1u;
  return accepted;
}

byte_buffer encode_ack_batch_body(const std::vector<bool>& accepted) {
  byte_buffer out(batch_header_size + (accepted.size() + 7) / 8, 0);
  out[0] = batch_version;
  store_le16(out.data() + 1, static_cast<std::uint16_t>(accepted.size()));
  for (std::size_t i = 0; i < accepted.size(); ++i)
    if (accepted[i]) out[batch_header_size + i / 8] |= static_cast<std::uint8_t>(1u << (i % 8));
  return out;
}

byte_buffer encode_ack_batch(const std::vector<bool>& accepted) {
  return encode_frame(message_type::ack_batch, durability::durable, encode_ack_batch_body(accepted));
}

}  // namespace weir::wire
