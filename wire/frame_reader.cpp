#include "wire/frame_reader.hpp"

#include <algorithm>

namespace weir::wire {

frame_reader::status frame_reader::feed(byte_span& input) {
  for (;;) {
    switch (phase_) {
      case phase::done: return status::frame_ready;
      case phase::failed: return status::failed;
      case phase::header: {
        const std::size_t n = std::min(header_size - header_fill_, input.size());
        std::copy_n(input.begin(), n, header_bytes_.begin() + header_fill_);
        header_fill_ += n;
        input = input.subspan(n);
        if (header_fill_ < header_size) return status::need_more;
        auto h = decode_header(header_bytes_, payload_cap_);
        if (!h) {
          error_ = h.error();
          phase_ = phase::failed;
          return status::failed;
        }
        current_.header = h.value();
        current_.payload.clear();
        if (current_.header.payload_len > admit_above_) {
          phase_ = phase::admission;
          return status::need_more;
        }
        current_.payload.reserve(std::min<std::size_t>(h.value().payload_len, initial_payload_slice));
        phase_ = current_.header.payload_len == 0 ? phase::crc : phase::payload;
        break;
      }
      case phase::admission:
        return status::need_more;
      case phase::payload: {
        const std::size_t want = current_.header.payload_len - current_.payload.size();
        const std::size_t n = std::min(want, input.size());
        current_.payload.insert(current_.payload.end(), input.begin(), input.begin() + n);
        input = input.subspan(n);
        if (current_.payload.size() < current_.header.payload_len) return status::need_more;
        phase_ = phase::crc;
        break;
      }
      case phase::crc: {
        const std::size_t n = std::min(payload_crc_size - crc_fill_, input.size());
        std::copy_n(input.begin(), n, crc_bytes_.begin() + crc_fill_);
        crc_fill_ += n;
        input = input.subspan(n);
        if (crc_fill_ < payload_crc_size) return status::need_more;
        if (crc32_of(current_.payload) != load_le32(crc_bytes_.data())) {
          error_ = frame_error::payload_crc_mismatch;
          phase_ = phase::failed;
          return status::failed;
        }
        phase_ = phase::done;
        return status::frame_ready;
      }
    }
  }
}

void frame_reader::admit() {
  if (phase_ != phase::admission) return;
  current_.payload.reserve(current_.header.payload_len);
  phase_ = phase::payload;
}

stream_frame frame_reader::take() {
  stream_frame out = std::move(current_);
  current_ = {};
  header_fill_ = 0;
  crc_fill_ = 0;
  phase_ = phase::header;
  return out;
}

}  // namespace weir::wire
