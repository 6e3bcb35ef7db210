// coordinate: the record-coordinate decoder behind AckTracked, on the bytes
// as a bare coordinate and, when they are a whole AckTracked frame, on its
// payload (the client's path). A coordinate that decodes must re-encode to the
// same bytes and keep to the limits the protocol states.
#include "wire/coordinate.hpp"
#include "wire/frame.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/fuzz_targets.hpp"

using namespace weir;
using namespace weir::wire;

namespace {

void check_coordinate(byte_span bytes, const record_coordinate& c) {
  WEIR_FUZZ_CHECK(c.segment.size() <= max_segment_name);
  WEIR_FUZZ_CHECK(is_valid_utf8(c.segment));
  WEIR_FUZZ_CHECK(encode_coordinate(c) == byte_buffer(bytes.begin(), bytes.end()));
}

}  // namespace

int weir_fuzz_coordinate(const std::uint8_t* data, std::size_t size) {
  const byte_span bytes(data, size);
  if (const auto c = decode_coordinate(bytes); c.ok()) check_coordinate(bytes, c.value());

  const auto frame = decode_frame(bytes);
  if (frame.ok() && frame.value().header.type == message_type::ack_tracked) {
    const auto payload = frame.value().payload;
    if (const auto c = decode_coordinate(payload); c.ok()) {
      check_coordinate(payload, c.value());
      // The daemon's replies carry the filler durability; others differ only there.
      if (frame.value().header.dur == durability::durable)
        WEIR_FUZZ_CHECK(encode_ack_tracked(c.value()) == byte_buffer(bytes.begin(), bytes.end()));
    }
  }
  // The UTF-8 check on its own, on text no length field has bounded.
  (void)is_valid_utf8(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
