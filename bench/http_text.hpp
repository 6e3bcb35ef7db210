#pragma once
// What weir-bench's HTTP pieces (the http_post baseline's client and its
// own endpoint) read from a message head.
#include <cctype>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <string_view>

namespace weir::bench {

/// The Content-Length of a message head (its name in any case), or 0.
inline std::size_t content_length(std::string_view head) {
  static constexpr std::string_view field = "\r\ncontent-length:";
  for (std::size_t at = 0; at + field.size() <= head.size(); ++at) {
    bool match = true;
    for (std::size_t i = 0; i < field.size() && match; ++i)
      match = std::tolower(static_cast<unsigned char>(head[at + i])) == field[i];
    if (match) return std::strtoull(std::string(head.substr(at + field.size(), 24)).c_str(), nullptr, 10);
  }
  return 0;
}

}  // namespace weir::bench
