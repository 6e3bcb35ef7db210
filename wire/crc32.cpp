#include "wire/crc32.hpp"

#include <zlib.h>

#include <array>
#include <bit>
#include <cstring>

namespace weir {

namespace {

constexpr std::uint32_t polynomial = 0xEDB88320u;  // reflected
constexpr std::size_t small_input = 256;           // below this, the table walk

/// table[k][b]: the CRC of byte b followed by k zero bytes.
constexpr std::array<std::array<std::uint32_t, 256>, 8> make_tables() {
  std::array<std::array<std::uint32_t, 256>, 8> t{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t c = b;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? polynomial ^ (c >> 1) : c >> 1;
    t[0][b] = c;
  }
  for (std::uint32_t b = 0; b < 256; ++b)
    for (std::size_t k = 1; k < 8; ++k) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  return t;
}

constexpr auto tables = make_tables();

std::uint32_t crc32_small(std::uint32_t crc, const std::uint8_t* p, std::size_t n) {
  crc = ~crc;
  for (; n >= 8; p += 8, n -= 8) {
    std::uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= crc;
    crc = tables[7][lo & 0xff] ^ tables[6][(lo >> 8) & 0xff] ^ tables[5][(lo >> 16) & 0xff] ^ tables[4][lo >> 24] ^
          tables[3][hi & 0xff] ^ tables[2][(hi >> 8) & 0xff] ^ tables[1][(hi >> 16) & 0xff] ^ tables[0][hi >> 24];
  }
  for (; n > 0; ++p, --n) crc = tables[0][(crc ^ *p) & 0xff] ^ (crc >> 8);
  return ~crc;
}

static_assert(std::endian::native == std::endian::little, "crc32_small reads little-endian words");

}  // namespace

std::uint32_t crc32_of(std::span<const std::uint8_t> bytes, std::uint32_t seed) {
  if (bytes.size() < small_input) return crc32_small(seed, bytes.data(), bytes.size());
  // zlib takes a uInt length; feed huge inputs in pieces.
  std::uint32_t crc = seed;
  const std::uint8_t* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    auto n = static_cast<uInt>(left > (1u << 30) ? (1u << 30) : left);
    crc = static_cast<std::uint32_t>(::crc32(crc, p, n));
    p += n;
    left -= n;
  }
  return crc;
}

}  // namespace weir
