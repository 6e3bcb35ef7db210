#pragma once
// Incremental frame decoding for a byte stream. Bytes arrive in arbitrary
// chunks; the reader validates the header before it allocates anything for
// the payload. A payload larger than `admit_above` waits, after its header,
// until the caller admits it (having found the memory for it); then its
// buffer is allocated once, at its declared size.
#include <array>
#include <cstdint>

#include "wire/frame.hpp"

namespace weir::wire {

struct stream_frame {
  frame_header header;
  byte_buffer payload;
};

class frame_reader {
 public:
  enum class status { need_more, frame_ready, failed };

  explicit frame_reader(std::uint32_t payload_cap, std::size_t admit_above = SIZE_MAX)
      : payload_cap_(payload_cap), admit_above_(admit_above) {}

  /// Consumes bytes from the front of `input` until a frame completes, an
  /// error is found, or the input runs out. After `frame_ready`, take the
  /// frame with `take()`; after `failed`, `error()` says why and the reader
  /// stays failed (the stream cannot be resynchronised).
  status feed(byte_span& input);

  stream_frame take();
  frame_error error() const { return error_; }

  /// True when some bytes of a frame have arrived but not all of them.
  bool mid_frame() const { return phase_ != phase::header || header_fill_ > 0; }

  /// A header announced a payload over `admit_above`: feed() consumes nothing
  /// more (answering need_more) until admit().
  bool awaiting_admission() const { return phase_ == phase::admission; }
  std::uint32_t declared_payload() const { return current_.header.payload_len; }
  void admit();

 private:
  enum class phase { header, admission, payload, crc, done, failed };

  static constexpr std::size_t initial_payload_slice = 64 * 1024;

  std::uint32_t payload_cap_;
  std::size_t admit_above_;
  phase phase_ = phase::header;
  std::array<std::uint8_t, header_size> header_bytes_{};
  std::size_t header_fill_ = 0;
  std::array<std::uint8_t, payload_crc_size> crc_bytes_{};
  std::size_t crc_fill_ = 0;
  stream_frame current_{};
  frame_error error_ = frame_error::truncated_frame;
};

}  // namespace weir::wire
