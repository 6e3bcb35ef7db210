#pragma once
// A number that is the whole of a short text from /proc or /sys (an
// interrupt, a thread id, a cgroup quota): digits only, no sign, nothing
// around them.
#include <charconv>
#include <optional>
#include <string_view>

namespace weir {

template <class T>
std::optional<T> whole_number(std::string_view text) {
  T n{};
  if (text.empty() || text.front() == '-') return std::nullopt;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return n;
}

}  // namespace weir
