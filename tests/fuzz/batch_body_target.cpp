// batch_body: the PushBatch body decoder, and the AckBatch decoder on the
// same bytes.
//
// Input: max_records u16 | record_cap u32 | ack_expected u16 | body. The caps
// come from the input so that every cap check (count, per-record length, the
// hard caps above them) is reachable. A decoded body must be exactly what its
// records re-encode to, and no record may exceed a cap or leave the body.
#include <algorithm>

#include "wire/batch.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/fuzz_targets.hpp"

using namespace weir;
using namespace weir::wire;

int weir_fuzz_batch_body(const std::uint8_t* data, std::size_t size) {
  fuzz::input_reader in(data, size);
  const std::uint16_t max_records = in.u16();
  const std::uint32_t record_cap = in.u32();
  const std::uint16_t ack_expected = in.u16();
  const byte_span body = in.rest();

  if (const auto records = decode_batch_body(body, max_records, record_cap); records.ok()) {
    const auto& r = records.value();
    WEIR_FUZZ_CHECK(!r.empty());
    WEIR_FUZZ_CHECK(r.size() <= std::min<std::uint32_t>(max_records, batch_records_hard_cap));
    for (const auto record : r) {
      WEIR_FUZZ_CHECK(!record.empty() && record.size() <= std::min(record_cap, payload_hard_cap));
      WEIR_FUZZ_CHECK(record.data() >= body.data() && record.data() + record.size() <= body.data() + body.size());
    }
    WEIR_FUZZ_CHECK(encode_batch_body(r) == byte_buffer(body.begin(), body.end()));
  }

  if (const auto accepted = decode_ack_batch(body, ack_expected); accepted.ok()) {
    WEIR_FUZZ_CHECK(accepted.value().size() == ack_expected);
    WEIR_FUZZ_CHECK(encode_ack_batch_body(accepted.value()) == byte_buffer(body.begin(), body.end()));
  }
  return 0;
}

namespace weir::fuzz {

byte_buffer batch_body_input(std::uint16_t max_records, std::uint32_t record_cap, std::uint16_t ack_expected,
                             byte_span body) {
  byte_buffer out;
  append_le16(out, max_records);
  append_le32(out, record_cap);
  append_le16(out, ack_expected);
  append_bytes(out, body);
  return out;
}

}  // namespace weir::fuzz
