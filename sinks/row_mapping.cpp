#include "sinks/row_mapping.hpp"

#include <nlohmann/json.hpp>

namespace weir {

row_mapping::row_mapping(const table_mapping& m) : table_(m.table), missing_(m.missing) {
  columns_.push_back(m.id_column);
  for (const auto& [column, pointer] : m.columns) {
    columns_.push_back(column);
    pointers_.push_back(pointer);
  }
}

std::string row_mapping::values(const sink_record& r, std::vector<std::optional<std::string>>& out) const {
  out.clear();
  out.emplace_back(r.id);
  const auto payload =
      nlohmann::json::parse(r.payload.begin(), r.payload.end(), nullptr, /*allow_exceptions=*/false);
  if (payload.is_discarded()) return "the payload is not JSON (" + table_ + " takes its columns from a JSON object)";
  if (!payload.is_object()) return "the payload is JSON but not an object (" + table_ + " takes its columns from one)";
  for (std::size_t i = 0; i < pointers_.size(); ++i) {
    // Checked at configuration time (json_pointer_ok): this cannot throw.
    const nlohmann::json::json_pointer at(pointers_[i]);
    if (!payload.contains(at)) {
      if (missing_ == missing_field::error)
        return "the payload has no " + (pointers_[i].empty() ? std::string("value") : pointers_[i]) +
               " for column " + columns_[i + 1];
      out.emplace_back(std::nullopt);
      continue;
    }
    const auto& v = payload.at(at);
    if (v.is_null()) out.emplace_back(std::nullopt);
    else if (v.is_string()) out.emplace_back(v.get<std::string>());
    else out.emplace_back(v.dump());
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
