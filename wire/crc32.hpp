#pragma once
// CRC-32/ISO-HDLC (the zlib polynomial), the checksum of wire frames and WAB
// records. Most records are small, and zlib's crc32 spends more on setting up
// a call than on a 72-byte record; below a few hundred bytes a slicing-by-8
// table walk is about four times faster. Larger inputs go to zlib. Both give
// the same value for every input.
#include <cstddef>
#include <cstdint>
#include <span>

namespace weir {

/// `seed` continues a running CRC (0 to start one).
std::uint32_t crc32_of(std::span<const std::uint8_t> bytes, std::uint32_t seed = 0);

}  // namespace weir
