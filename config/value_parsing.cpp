#include "config/value_parsing.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace weir {

namespace {

std::optional<std::int64_t> integer_from(std::string_view s) {
  std::int64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<std::int64_t> parse_integer(const YAML::Node& n) {
  if (!n.IsScalar()) return std::nullopt;
  return integer_from(n.Scalar());
}

std::optional<std::int64_t> parse_byte_size(const YAML::Node& n) {
  if (!n.IsScalar()) return std::nullopt;
  std::string_view s = n.Scalar();
  static constexpr std::pair<std::string_view, int> units[] = {
      {"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}};
  for (auto [suffix, shift] : units) {
    if (s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix) {
      auto v = integer_from(s.substr(0, s.size() - suffix.size()));
      if (!v || *v < 0 || *v > (std::int64_t{1} << (62 - shift))) return std::nullopt;
      return *v << shift;
    }
  }
  return integer_from(s);
}

std::optional<double> parse_number(const YAML::Node& n) {
  if (!n.IsScalar() || n.Scalar().empty()) return std::nullopt;
  const std::string& s = n.Scalar();
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<bool> parse_bool(const YAML::Node& n) {
  if (!n.IsScalar()) return std::nullopt;
  const std::string& s = n.Scalar();
  if (s == "true" || s == "yes" || s == "on" || s == "1") return true;
  if (s == "false" || s == "no" || s == "off" || s == "0") return false;
  return std::nullopt;
}

std::optional<host_port> parse_address(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  if (host.front() == '[') {  // [v6]:port
    if (host.size() < 3 || host.back() != ']') return std::nullopt;
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return std::nullopt;  // a bare IPv6 address needs brackets
  }
  auto port = integer_from(text.substr(colon + 1));
  if (!port || *port < 1 || *port > 65535) return std::nullopt;
  return host_port{std::string(host), static_cast<std::uint16_t>(*port)};
}

std::string format_bytes(std::int64_t bytes) {
  static constexpr std::pair<const char*, int> units[] = {
      {"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}};
  for (auto [suffix, shift] : units) {
    const std::int64_t unit = std::int64_t{1} << shift;
    if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes / unit) + suffix;
  }
  return std::to_string(bytes);
}

std::string format_number(double v) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, v).ptr;  // the shortest text that reads back as v
  return std::string(text, end);
}

bool account_name_ok(const std::string& v) {
  static const std::string allowed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-";
  return !v.empty() && v.size() <= 64 && v.find_first_not_of(allowed) == std::string::npos;
}

std::string printable(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if (c == '\r') out += "\\r";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string quoted_text(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += printable(std::string(1, c));
  }
  return out + "\"";
}

bool sql_identifier_ok(std::string_view v) {
  if (v.empty() || v.size() > 63) return false;
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!letter(v[0])) return false;
  for (char c : v)
    if (!letter(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

bool sql_table_name_ok(std::string_view v) {
  const auto dot = v.find('.');
  if (dot == std::string_view::npos) return sql_identifier_ok(v);
  return sql_identifier_ok(v.substr(0, dot)) && sql_identifier_ok(v.substr(dot + 1));
}

bool json_pointer_ok(std::string_view v) {
  if (!v.empty() && v[0] != '/') return false;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto c = static_cast<unsigned char>(v[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c == '~' && (i + 1 >= v.size() || (v[i + 1] != '0' && v[i + 1] != '1'))) return false;
  }
  return true;
}

}  // namespace weir
