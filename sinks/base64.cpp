#include "sinks/base64.hpp"

#include <openssl/evp.h>

#include <algorithm>

namespace weir {

std::string base64_encode(byte_span bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes.data(),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string base64_decode(const std::string& text) {
  if (text.size() % 4 != 0) return "";
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return "";
  // EVP_DecodeBlock counts each padding character as a zero byte.
  const std::size_t padding = text.size() - std::min(text.size(), text.find_last_not_of('=') + 1);
  out.resize(static_cast<std::size_t>(n) - std::min(padding, static_cast<std::size_t>(n)));
  return out;
}

}  // namespace weir
