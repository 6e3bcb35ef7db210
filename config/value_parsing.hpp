#pragma once
// Strict conversions from YAML scalars to typed values. yaml-cpp's own
// conversions accept too much ("1.5" as an int via truncation, "y" as a bool
// in some versions) and report errors without the key; these accept exactly
// what docs/configuration.md promises.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

namespace weir {

struct host_port {
  std::string host;
  std::uint16_t port;
};

std::optional<std::int64_t> parse_integer(const YAML::Node& n);
std::optional<std::int64_t> parse_byte_size(const YAML::Node& n);
std::optional<double> parse_number(const YAML::Node& n);
std::optional<bool> parse_bool(const YAML::Node& n);
std::optional<host_port> parse_address(std::string_view text);

/// 67108864 -> "64MiB"; values that are not a whole unit stay plain numbers.
std::string format_bytes(std::int64_t bytes);
std::string format_number(double v);

/// `text` as a config error echoes it: control characters written as escapes
/// (an error stays one line).
std::string printable(const std::string& text);
/// `text` in double quotes, printable, with `"` and `\` escaped: the quotes
/// stay balanced, so what lies outside them is the message's own words.
std::string quoted_text(const std::string& text);

/// A user or group written as a name or a number ("app", "1001").
bool account_name_ok(const std::string& v);

/// An SQL identifier weir writes unquoted-safe and quotes anyway: a letter
/// or _, then letters, digits or _, at most 63 (PostgreSQL's limit).
bool sql_identifier_ok(std::string_view v);
/// A table name: an identifier, or schema.identifier.
bool sql_table_name_ok(std::string_view v);
/// An RFC 6901 JSON pointer: "" (the whole document) or "/" tokens, "~"
/// only as ~0 or ~1, no control characters.
bool json_pointer_ok(std::string_view v);

}  // namespace weir
