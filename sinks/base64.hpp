#pragma once
// Standard base64 (RFC 4648, with padding), via OpenSSL.
#include <string>

#include "messages/wire/bytes.hpp"

namespace weir {

std::string base64_encode(byte_span bytes);

}  // namespace weir
