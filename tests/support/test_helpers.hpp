#pragma once
// Small helpers shared by the live tests.
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace weir::test {

inline std::span<const std::uint8_t> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

inline std::vector<std::span<const std::uint8_t>> spans_of(const std::vector<std::string>& v) {
  std::vector<std::span<const std::uint8_t>> out;
  for (const auto& s : v) out.push_back(as_bytes(s));
  return out;
}

/// Polls `pred` every 20 ms until it holds or `limit` passes; its last answer.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return pred();
}

}  // namespace weir::test
