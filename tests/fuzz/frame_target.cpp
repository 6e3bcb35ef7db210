// frame: the stream frame reader against the whole-frame decoder.
//
// Input: control byte (low nibble k = number of chunk sizes, high nibble =
// payload cap choice), then k chunk-size bytes (size = byte + 1, cycled; k = 0
// feeds everything at once), then the stream. Besides "no crash", the reader
// must agree with decode_header/decode_frame on every frame and every error,
// and each frame it returns must re-encode to exactly the bytes it consumed.
#include <algorithm>
#include <array>
#include <limits>

#include "wire/frame.hpp"
#include "wire/frame_reader.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/fuzz_targets.hpp"

using namespace weir;
using namespace weir::wire;

namespace {

// Around the edges that matter: 0, the smallest payloads, the 64 KiB initial
// slice of the reader, the hard cap and beyond it.
constexpr std::array<std::uint32_t, 16> caps = {
    payload_hard_cap, 0, 1, 2, 3, 4, 16, 255, 256, 4096, 65535, 65536, 65537,
    payload_hard_cap - 1, payload_hard_cap + 1, std::numeric_limits<std::uint32_t>::max()};

/// Follows the reader through the stream, checking each verdict as it comes.
class stream_check {
 public:
  stream_check(byte_span stream, std::uint32_t cap) : stream_(stream), cap_(cap), reader_(cap) {}

  /// Feeds one chunk; false once the reader has failed (it stays failed).
  bool feed(byte_span chunk) {
    while (!chunk.empty()) {
      const std::size_t before = chunk.size();
      const auto status = reader_.feed(chunk);
      consumed_ += before - chunk.size();
      if (status == frame_reader::status::need_more) {
        WEIR_FUZZ_CHECK(chunk.empty());  // it only waits when the chunk is used up
        return true;
      }
      if (status == frame_reader::status::failed) {
        failed();
        return false;
      }
      ready();
    }
    return true;
  }

  void finish() {
    // Bytes of an unfinished frame are exactly what the reader calls mid-frame.
    WEIR_FUZZ_CHECK(reader_.mid_frame() == (consumed_ > frame_start_));
    byte_span none;
    WEIR_FUZZ_CHECK(reader_.feed(none) == frame_reader::status::need_more);
  }

  std::size_t frames() const { return frames_; }
  std::size_t consumed() const { return consumed_; }

 private:
  byte_span current() const { return stream_.subspan(frame_start_, consumed_ - frame_start_); }

  void ready() {
    const auto f = reader_.take();
    WEIR_FUZZ_CHECK(f.header.payload_len == f.payload.size());
    WEIR_FUZZ_CHECK(f.payload.size() <= std::min(cap_, payload_hard_cap));
    WEIR_FUZZ_CHECK(encode_frame(f.header.type, f.header.dur, f.payload) ==
                    byte_buffer(current().begin(), current().end()));
    const auto whole = decode_frame(current(), cap_);
    WEIR_FUZZ_CHECK(whole.ok());
    WEIR_FUZZ_CHECK(std::ranges::equal(whole.value().payload, f.payload));
    frame_start_ = consumed_;
    ++frames_;
  }

  void failed() {
    const auto error = reader_.error();
    // A stream error always has a Nack; truncation only ever means "wait".
    WEIR_FUZZ_CHECK(nack_for(error).has_value());
    const auto header = decode_header(stream_.subspan(frame_start_, std::min(header_size, stream_.size() - frame_start_)), cap_);
    if (error == frame_error::payload_crc_mismatch) {
      WEIR_FUZZ_CHECK(header.ok());
      WEIR_FUZZ_CHECK(consumed_ - frame_start_ == header_size + header.value().payload_len + payload_crc_size);
      WEIR_FUZZ_CHECK(!decode_frame(current(), cap_).ok());
    } else {
      // A header error is found on the 16th byte, before any payload is read.
      WEIR_FUZZ_CHECK(!header.ok() && header.error() == error);
      WEIR_FUZZ_CHECK(consumed_ - frame_start_ == header_size);
    }
    byte_span more = stream_.subspan(consumed_);
    WEIR_FUZZ_CHECK(reader_.feed(more) == frame_reader::status::failed);
  }

  byte_span stream_;
  std::uint32_t cap_;
  frame_reader reader_;
  std::size_t consumed_ = 0, frame_start_ = 0, frames_ = 0;
};

}  // namespace

int weir_fuzz_frame(const std::uint8_t* data, std::size_t size) {
  fuzz::input_reader in(data, size);
  const std::uint8_t control = in.u8();
  const byte_span sizes = in.take(control & 0x0f);
  const std::uint32_t cap = caps[control >> 4];
  const byte_span stream = in.rest();

  stream_check check(stream, cap);
  bool alive = true;
  for (std::size_t at = 0, i = 0; alive && at < stream.size(); ++i) {
    const std::size_t n = sizes.empty() ? stream.size() : std::min<std::size_t>(sizes[i % sizes.size()] + 1u, stream.size() - at);
    alive = check.feed(stream.subspan(at, n));
    at += n;
  }
  if (alive) {
    WEIR_FUZZ_CHECK(check.consumed() == stream.size());
    check.finish();
  }

  // The whole stream as one frame: only when the reader saw exactly that.
  const auto whole = decode_frame(stream, cap);
  if (whole.ok()) WEIR_FUZZ_CHECK(alive && check.frames() == 1);
  (void)decode_header(stream, cap);
  return 0;
}

namespace weir::fuzz {

byte_buffer frame_input(byte_span stream, std::span<const std::uint8_t> chunk_codes, std::uint8_t cap_code) {
  const auto k = static_cast<std::uint8_t>(std::min<std::size_t>(chunk_codes.size(), 15));
  byte_buffer out;
  out.reserve(1 + k + stream.size());
  out.push_back(static_cast<std::uint8_t>((cap_code << 4) | k));
  append_bytes(out, chunk_codes.first(k));
  append_bytes(out, stream);
  return out;
}

}  // namespace weir::fuzz
