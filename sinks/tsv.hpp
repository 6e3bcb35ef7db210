#pragma once
// Tab-separated text rows, the bulk form PostgreSQL's COPY (text format) and
// ClickHouse's TabSeparated both read: fields apart by a tab, rows ended by
// a newline, NULL as \N; in a value, backslash, tab, newline and carriage
// return are escaped and every other byte goes as it is.
#include <optional>
#include <string>
#include <string_view>

namespace weir {

inline void append_tsv_value(std::string& out, std::string_view v) {
  for (char c : v) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
}

inline void append_tsv_value(std::string& out, const std::optional<std::string>& v) {
  if (v) append_tsv_value(out, std::string_view(*v));
  else out += "\\N";
}

}  // namespace weir
