#include "sinks/json_value_text.hpp"

#include <nlohmann/json.hpp>

namespace weir {

namespace {

// Every function here reads a text already known to be valid JSON, so it
// trusts the grammar: a string ends at its closing quote, a container at
// its matching bracket.

const char* skip_space(const char* p, const char* end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) ++p;
  return p;
}

/// Past the string that starts at p (on its opening quote).
const char* skip_string(const char* p) {
  for (++p; *p != '"'; ++p)
    if (*p == '\\') ++p;
  return p + 1;
}

/// Past the value that starts at p.
const char* skip_value(const char* p, const char* end) {
  if (*p == '"') return skip_string(p);
  if (*p != '{' && *p != '[') {
    while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') ++p;
    return p;
  }
  std::size_t depth = 0;
  while (true) {
    if (*p == '"') {
      p = skip_string(p);
      continue;
    }
    if (*p == '{' || *p == '[') ++depth;
    else if ((*p == '}' || *p == ']') && --depth == 0) return p + 1;
    ++p;
  }
}

/// Whether the key spelled by the string at [from, to) (quotes included) is `name`.
bool key_is(const char* from, const char* to, const std::string& name) {
  const std::string_view raw(from + 1, static_cast<std::size_t>(to - from - 2));
  if (raw.find('\\') == std::string_view::npos) return raw == name;
  return nlohmann::json::parse(from, to).get_ref<const std::string&>() == name;  // escapes undone
}

/// An array index as RFC 6901 spells one: 0, or digits without a leading zero.
std::optional<std::size_t> array_index(const std::string& token) {
  if (token.empty() || token.size() > 18 || (token.size() > 1 && token[0] == '0')) return std::nullopt;
  std::size_t n = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  return n;
}

/// The value `token` names in the container at p, or nullptr.
const char* member(const char* p, const char* end, const std::string& token) {
  const bool object = *p == '{';
  const auto index = object ? std::nullopt : array_index(token);
  if (!object && !index) return nullptr;
  const char* found = nullptr;
  std::size_t position = 0;
  p = skip_space(p + 1, end);
  while (*p != '}' && *p != ']') {
    const char* value = p;
    bool match = !object && position++ == *index;
    if (object) {
      const char* key_end = skip_string(p);
      match = key_is(p, key_end, token);
      value = skip_space(skip_space(key_end, end) + 1, end);  // past the ':'
    }
    if (match) found = value;  // an object's last such key counts
    p = skip_space(skip_value(value, end), end);
    if (*p == ',') p = skip_space(p + 1, end);
  }
  return found;
}

}  // namespace

std::vector<std::string> json_pointer_tokens(std::string_view pointer) {
  std::vector<std::string> out;
  if (pointer.empty()) return out;
  for (std::size_t at = 1;;) {  // past the leading '/'
    const auto slash = pointer.find('/', at);
    const auto raw = pointer.substr(at, slash == std::string_view::npos ? std::string_view::npos : slash - at);
    std::string token;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size()) {
        token += raw[i + 1] == '1' ? '/' : '~';
        ++i;
      } else {
        token += raw[i];
      }
    }
    out.push_back(std::move(token));
    if (slash == std::string_view::npos) return out;
    at = slash + 1;
  }
}

std::optional<std::string_view> json_value_at(std::string_view json, const std::vector<std::string>& tokens) {
  const char* end = json.data() + json.size();
  const char* p = skip_space(json.data(), end);
  for (const auto& token : tokens) {
    if (*p != '{' && *p != '[') return std::nullopt;
    p = member(p, end, token);
    if (!p) return std::nullopt;
  }
  return std::string_view(p, static_cast<std::size_t>(skip_value(p, end) - p));
}

}  // namespace weir
