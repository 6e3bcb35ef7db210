#include "soak/payload.hpp"

#include <charconv>

namespace weir::soak {

namespace {

constexpr std::string_view prefix = "weir-soak p=";

/// Reads a decimal number at `at` followed by `sep`; advances past both.
template <class T>
bool read_number(std::string_view s, std::size_t& at, char sep, T& out) {
  const char* first = s.data() + at;
  const char* last = s.data() + s.size();
  auto [end, ec] = std::from_chars(first, last, out);
  if (ec != std::errc() || end == last || *end != sep) return false;
  at = static_cast<std::size_t>(end - s.data()) + 1;
  return true;
}

/// Reads a word up to `sep`; advances past it.
std::string_view read_word(std::string_view s, std::size_t& at, char sep) {
  const auto end = s.find(sep, at);
  if (end == std::string_view::npos) return {};
  const auto word = s.substr(at, end - at);
  at = end + 1;
  return word;
}

}  // namespace

const char* name_of(tier t) { return t == tier::durable ? "durable" : "buffered"; }

const char* name_of(push_kind k) {
  switch (k) {
    case push_kind::push: return "push";
    case push_kind::tracked: return "tracked";
    case push_kind::batch: return "batch";
  }
  return "?";
}

std::string make_payload(const record_origin& o) {
  std::string s(prefix);
  s += std::to_string(o.producer);
  s += " s=";
  s += std::to_string(o.seq);
  s += " t=";
  s += name_of(o.durability);
  s += " k=";
  s += name_of(o.kind);
  s += " |";
  s.append(static_cast<std::size_t>((o.seq * 37) % 193), static_cast<char>('a' + o.seq % 26));
  return s;
}

std::optional<record_origin> parse_payload(std::string_view payload) {
  if (payload.substr(0, prefix.size()) != prefix) return std::nullopt;
  record_origin o;
  std::size_t at = prefix.size();
  if (!read_number(payload, at, ' ', o.producer)) return std::nullopt;
  if (payload.substr(at, 2) != "s=") return std::nullopt;
  at += 2;
  if (!read_number(payload, at, ' ', o.seq)) return std::nullopt;
  if (payload.substr(at, 2) != "t=") return std::nullopt;
  at += 2;
  const auto t = read_word(payload, at, ' ');
  if (t == "durable")
    o.durability = tier::durable;
  else if (t == "buffered")
    o.durability = tier::buffered;
  else
    return std::nullopt;
  if (payload.substr(at, 2) != "k=") return std::nullopt;
  at += 2;
  const auto k = read_word(payload, at, ' ');
  if (k == "push")
    o.kind = push_kind::push;
  else if (k == "tracked")
    o.kind = push_kind::tracked;
  else if (k == "batch")
    o.kind = push_kind::batch;
  else
    return std::nullopt;
  // The whole payload must be exactly what make_payload writes: a record
  // whose bytes changed on the way is not "present".
  if (make_payload(o) != payload) return std::nullopt;
  return o;
}

}  // namespace weir::soak
