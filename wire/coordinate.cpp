#include "wire/coordinate.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "wire/frame.hpp"

namespace weir::wire {

std::string_view name_of(coordinate_error e) {
  switch (e) {
    case coordinate_error::truncated: return "Truncated";
    case coordinate_error::unsupported_version: return "UnsupportedVersion";
    case coordinate_error::segment_too_long: return "SegmentTooLong";
    case coordinate_error::length_mismatch: return "LengthMismatch";
    case coordinate_error::segment_not_utf8: return "SegmentNotUtf8";
  }
  return "?";
}

namespace {

/// SHA-256 fetched once, and a context per thread: making and fetching them
/// for every record cost more than hashing a small record.
EVP_MD_CTX* thread_sha256() {
  static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  struct context {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~context() { EVP_MD_CTX_free(ctx); }
  };
  thread_local context c;
  EVP_DigestInit_ex(c.ctx, sha256, nullptr);
  return c.ctx;
}

}  // namespace

record_id compute_record_id(std::string_view segment, std::uint64_t index, byte_span payload) {
  // What comes before the payload goes in as one update where it fits (any
  // segment name a coordinate can carry does): each update has a fixed cost
  // that was a good part of hashing a small record.
  std::array<std::uint8_t, 8 + max_segment_name + 16> head;
  const std::size_t name = std::min(segment.size(), max_segment_name);
  store_le64(head.data(), segment.size());
  std::memcpy(head.data() + 8, segment.data(), name);
  std::size_t used = 8 + name;
  EVP_MD_CTX* ctx = thread_sha256();
  if (name < segment.size()) {
    EVP_DigestUpdate(ctx, head.data(), used);
    EVP_DigestUpdate(ctx, segment.data() + name, segment.size() - name);
    used = 0;
  }
  store_le64(head.data() + used, index);
  store_le64(head.data() + used + 8, payload.size());
  EVP_DigestUpdate(ctx, head.data(), used + 16);
  EVP_DigestUpdate(ctx, payload.data(), payload.size());
  record_id id;
  EVP_DigestFinal_ex(ctx, id.data(), nullptr);
  return id;
}

std::string to_hex(byte_span bytes) {
  std::string out;
  to_hex(bytes, out);
  return out;
}

void to_hex(byte_span bytes, std::string& out) {
  static constexpr char digits[] = "0123456789abcdef";
  out.resize(bytes.size() * 2);
  char* at = out.data();
  for (auto b : bytes) {
    *at++ = digits[b >> 4];
    *at++ = digits[b & 0x0f];
  }
}

bool is_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t extra;
    std::uint32_t cp;
    if (c < 0x80) { ++i; continue; }
    if ((c & 0xe0) == 0xc0) { extra = 1; cp = c & 0x1f; }
    else if ((c & 0xf0) == 0xe0) { extra = 2; cp = c & 0x0f; }
    else if ((c & 0xf8) == 0xf0) { extra = 3; cp = c & 0x07; }
    else return false;
    if (i + extra >= s.size()) return false;
    for (std::size_t k = 1; k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    // Reject overlong forms, surrogates and code points past U+10FFFF.
    static constexpr std::uint32_t min_for[] = {0, 0x80, 0x800, 0x10000};
    if (cp < min_for[extra] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += extra + 1;
  }
  return true;
}

byte_buffer encode_coordinate(const record_coordinate& c) {
  byte_buffer out;
  out.reserve(coordinate_fixed_size + c.segment.size());
  out.push_back(coordinate_version);
  append_le64(out, c.index);
  append_bytes(out, c.id);
  append_le16(out, static_cast<std::uint16_t>(c.segment.size()));
  out.insert(out.end(), c.segment.begin(), c.segment.end());
  return out;
}

outcome<record_coordinate, coordinate_error> decode_coordinate(byte_span p) {
  if (p.size() < coordinate_fixed_size) return coordinate_error::truncated;
  if (p[0] != coordinate_version) return coordinate_error::unsupported_version;
  const std::size_t seg_len = load_le16(p.data() + 41);
  if (seg_len > max_segment_name) return coordinate_error::segment_too_long;
  if (p.size() != coordinate_fixed_size + seg_len) return coordinate_error::length_mismatch;
  record_coordinate c;
  c.index = load_le64(p.data() + 1);
  std::copy(p.begin() + 9, p.begin() + 41, c.id.begin());
  c.segment.assign(reinterpret_cast<const char*>(p.data()) + coordinate_fixed_size, seg_len);
  if (!is_valid_utf8(c.segment)) return coordinate_error::segment_not_utf8;
  return c;
}

byte_buffer encode_ack_tracked(const record_coordinate& c) {
  return encode_frame(message_type::ack_tracked, durability::durable, encode_coordinate(c));
}

}  // namespace weir::wire
