#include "sinks/row_mapping.hpp"

#include <nlohmann/json.hpp>

#include "sinks/json_value_text.hpp"

namespace weir {

row_mapping::row_mapping(const table_mapping& m) : table_(m.table), missing_(m.missing) {
  columns_.push_back(m.id_column);
  for (const auto& [column, pointer] : m.columns) {
    columns_.push_back(column);
    pointers_.push_back(pointer);
    tokens_.push_back(json_pointer_tokens(pointer));
  }
}

std::string row_mapping::values(const sink_record& r, std::vector<std::optional<std::string>>& out) const {
  out.clear();
  out.emplace_back(r.id);
  std::string_view payload(reinterpret_cast<const char*>(r.payload.data()), r.payload.size());
  if (payload.substr(0, 3) == "\xEF\xBB\xBF") payload.remove_prefix(3);  // a UTF-8 byte order mark, as JSON parsers allow
  if (!nlohmann::json::accept(payload))
    return "the payload is not JSON (" + table_ + " takes its columns from a JSON object)";
  if (payload[payload.find_first_not_of(" \t\n\r")] != '{')
    return "the payload is JSON but not an object (" + table_ + " takes its columns from one)";
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    const auto value = json_value_at(payload, tokens_[i]);
    if (!value) {
      if (missing_ == missing_field::error)
        return "the payload has no " + (pointers_[i].empty() ? std::string("value") : pointers_[i]) +
               " for column " + columns_[i + 1];
      out.emplace_back(std::nullopt);
    } else if (*value == "null") {
      out.emplace_back(std::nullopt);
    } else if (value->front() == '"') {
      out.emplace_back(nlohmann::json::parse(*value).get<std::string>());  // escapes undone
    } else {
      out.emplace_back(std::string(*value));  // as the payload spells it
    }
  }
  return {};
}

std::string quoted_sql_name(const std::string& name) {
  // Names are checked identifiers (sql_table_name_ok): no quote to double.
  std::string out = "\"";
  for (char c : name) out += c == '.' ? std::string("\".\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace weir
