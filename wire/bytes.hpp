#pragma once
// Little-endian integer access and CRC-32 (the zlib / ISO-3309 variant), shared
// by the wire codec and the WAB format.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "wire/crc32.hpp"

namespace weir {

using byte_span = std::span<const std::uint8_t>;
using byte_buffer = std::vector<std::uint8_t>;

inline std::uint16_t load_le16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}
inline std::uint32_t load_le32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}
inline std::uint64_t load_le64(const std::uint8_t* p) {
  return static_cast<std::uint64_t>(load_le32(p)) |
         (static_cast<std::uint64_t>(load_le32(p + 4)) << 32);
}
inline void store_le16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
}
inline void store_le32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
inline void store_le64(std::uint8_t* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
inline void append_le16(byte_buffer& out, std::uint16_t v) {
  out.resize(out.size() + 2);
  store_le16(out.data() + out.size() - 2, v);
}
inline void append_le32(byte_buffer& out, std::uint32_t v) {
  out.resize(out.size() + 4);
  store_le32(out.data() + out.size() - 4, v);
}
inline void append_le64(byte_buffer& out, std::uint64_t v) {
  out.resize(out.size() + 8);
  store_le64(out.data() + out.size() - 8, v);
}
inline void append_bytes(byte_buffer& out, byte_span bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

}  // namespace weir
