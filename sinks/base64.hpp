#pragma once
// Standard base64 (RFC 4648, with padding), via OpenSSL.
#include <string>

#include "wire/bytes.hpp"

namespace weir {

std::string base64_encode(byte_span bytes);
/// The bytes of padded base64 `text` (what base64_encode wrote); "" when it is not base64.
std::string base64_decode(const std::string& text);

}  // namespace weir
