#include "sinks/clickhouse_table_check.hpp"

#include <algorithm>

namespace weir {

std::string check_clickhouse_table(clickhouse_client& client, const std::string& database, const std::string& table,
                                   const std::vector<std::string>& columns, bool& reached) {
  // Names were checked at configuration time (letters, digits and _ only):
  // they can stand in quotes as they are.
  const std::string where = " WHERE database = '" + database + "' AND " ;
  std::vector<std::vector<std::string>> rows;
  auto a = client.select("SELECT engine FROM system.tables" + where + "name = '" + table + "'", rows);
  reached = a.reached;
  if (!a.ok) return "cannot look the table up: " + a.error;
  if (rows.empty())
    return "no such table in database " + database + " (weir fills a table of yours; create it first)";
  const std::string engine = rows[0][0];
  const std::string replacing = "ReplacingMergeTree";
  if (engine.size() < replacing.size() || engine.compare(engine.size() - replacing.size(), replacing.size(), replacing))
    return "its engine is " + engine + ", which keeps every copy of a record delivered again: use a " + replacing +
           " with " + columns.front() + " in its ORDER BY";

  a = client.select("SELECT name, type, default_kind, is_in_sorting_key FROM system.columns" + where + "table = '" +
                        table + "'",
                    rows);
  if (!a.ok) return "cannot read its columns: " + a.error;
  for (const auto& column : columns) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r[0] == column; });
    if (it == rows.end()) {
      std::string have;
      for (const auto& r : rows) have += (have.empty() ? "" : ", ") + r[0];
      return "it has no column " + column + " (its columns: " + have + ")";
    }
    if ((*it)[2] == "MATERIALIZED" || (*it)[2] == "ALIAS")
      return "column " + column + " is " + (*it)[2] + ": it takes no value";
  }
  const auto& id = *std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r[0] == columns.front(); });
  const std::string& type = id[1];
  if (type != "String" && type.rfind("FixedString(", 0) != 0)
    return "column " + id[0] + " is " + type + ", which cannot hold a record id (64 hex characters): make it String";
  if (type.rfind("FixedString(", 0) == 0 && std::atoi(type.c_str() + 12) < 64)
    return "column " + id[0] + " is " + type + ", which cannot hold a record id (64 hex characters): make it String";
  if (id[3] != "1")
    return "column " + id[0] + " is not in its ORDER BY: a ReplacingMergeTree folds a record delivered again only by "
           "its sorting key";
  return {};
}

}  // namespace weir
