#pragma once
// The numbers weir-sim and weir-cluster-sim take on their command lines.
#include <cstdint>
#include <string>

namespace weir::sim {

/// A decimal number of at most 18 digits; false for anything else.
inline bool parse_u64(const std::string& s, std::uint64_t& out) {
  if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  out = std::stoull(s);
  return true;
}

/// "A..B" with A <= B.
inline bool parse_seed_range(const std::string& s, std::uint64_t& first, std::uint64_t& last) {
  const auto dots = s.find("..");
  return dots != std::string::npos && parse_u64(s.substr(0, dots), first) && parse_u64(s.substr(dots + 2), last) &&
         first <= last;
}

}  // namespace weir::sim
