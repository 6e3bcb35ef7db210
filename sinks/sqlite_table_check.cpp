#include "sinks/sqlite_table_check.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <vector>

namespace weir {

namespace {

/// Runs `sql` with `args` bound as text and calls `row` for every row; false
/// (with `why`) when SQLite refuses it.
bool each_row(sqlite3* db, const char* sql, const std::vector<std::string>& args,
              const std::function<void(sqlite3_stmt*)>& row, std::string& why) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) {
    why = sqlite3_errmsg(db);
    return false;
  }
  for (std::size_t i = 0; i < args.size(); ++i)
    sqlite3_bind_text(st, static_cast<int>(i + 1), args[i].c_str(), static_cast<int>(args[i].size()), SQLITE_STATIC);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) row(st);
  if (rc != SQLITE_DONE) why = sqlite3_errmsg(db);
  sqlite3_finalize(st);
  return rc == SQLITE_DONE;
}

/// SQLite's names ignore ASCII case.
bool same_name(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string text_at(sqlite3_stmt* st, int column) {
  const auto* p = sqlite3_column_text(st, column);
  return p ? reinterpret_cast<const char*>(p) : "";
}

}  // namespace

std::string check_sqlite_table(sqlite3* db, const row_mapping& m) {
  const auto dot = m.table().find('.');
  const std::string schema = dot == std::string::npos ? "main" : m.table().substr(0, dot);
  const std::string table = dot == std::string::npos ? m.table() : m.table().substr(dot + 1);
  std::string why;
  struct column_info {
    std::string name, type;
    bool primary_key, generated;
  };
  std::vector<column_info> found;
  if (!each_row(db, "SELECT name, upper(type), pk, hidden FROM pragma_table_xinfo(?1, ?2) ORDER BY cid",
                {table, schema},
                [&](sqlite3_stmt* st) {
                  found.push_back({text_at(st, 0), text_at(st, 1), sqlite3_column_int(st, 2) > 0,
                                   sqlite3_column_int(st, 3) != 0});
                },
                why))
    return "cannot read the columns of " + m.table() + ": " + why;
  if (found.empty()) return "no table " + m.table() + " in the database (weir fills a table of yours; create it first)";
  auto find = [&](const std::string& name) {
    return std::find_if(found.begin(), found.end(), [&](const column_info& c) { return same_name(c.name, name); });
  };
  for (const auto& column : m.columns()) {
    const auto it = find(column);
    if (it == found.end()) {
      std::string have;
      for (const auto& c : found) have += (have.empty() ? "" : ", ") + c.name;
      return "table " + m.table() + " has no column " + column + " (its columns: " + have + ")";
    }
    if (it->generated) return "column " + column + " of " + m.table() + " is generated: it takes no value";
  }
  const std::string& id = m.columns().front();
  const auto id_info = find(id);
  std::size_t key_columns = 0;
  for (const auto& c : found) key_columns += c.primary_key;
  if (id_info->primary_key && key_columns == 1) {
    // A lone INTEGER PRIMARY KEY is the rowid, which takes integers only.
    if (id_info->type == "INTEGER")
      return "column " + id + " of " + m.table() +
             " is an INTEGER PRIMARY KEY (SQLite's rowid), which cannot hold a record id (64 hex characters); "
             "declare it TEXT";
    return {};
  }
  std::vector<std::string> unique_indexes;
  if (!each_row(db, "SELECT name FROM pragma_index_list(?1, ?2) WHERE \"unique\" = 1 AND partial = 0",
                {table, schema}, [&](sqlite3_stmt* st) { unique_indexes.push_back(text_at(st, 0)); }, why))
    return "cannot read the indexes of " + m.table() + ": " + why;
  for (const auto& index : unique_indexes) {
    std::vector<std::string> columns;
    if (!each_row(db, "SELECT name FROM pragma_index_info(?1, ?2)", {index, schema},
                  [&](sqlite3_stmt* st) { columns.push_back(text_at(st, 0)); }, why))
      return "cannot read index " + index + ": " + why;
    if (columns.size() == 1 && same_name(columns[0], id)) return {};
  }
  return "column " + id + " of " + m.table() +
         " is not unique (make it the primary key or give it a unique index of its own): a record delivered again "
         "would be a second row";
}

}  // namespace weir
