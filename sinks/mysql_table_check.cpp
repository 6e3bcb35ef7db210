#include "sinks/mysql_table_check.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace weir {

namespace {

bool same_name(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string backquoted(const std::string& name) { return "`" + name + "`"; }  // checked names: no ` inside

struct column_info {
  std::string name, type, data_type;
  long long length = 0;
  bool not_null = false, has_default = false, generated = false;
};

/// Whether a column of this type holds a record id as it is: 64 characters.
bool holds_record_id(const column_info& c) {
  static const char* const text_types[] = {"char",     "varchar", "tinytext", "text",
                                           "mediumtext", "longtext", "binary", "varbinary"};
  return std::find(std::begin(text_types), std::end(text_types), c.data_type) != std::end(text_types) &&
         c.length >= 64;
}

}  // namespace

std::string check_mysql_table(mysql_session& s, const row_mapping& m, mysql_table& out) {
  // Names were checked at configuration time (letters, digits and _ only):
  // they can stand in quotes as they are.
  const auto dot = m.table().find('.');
  std::string schema = "DATABASE()";
  if (dot != std::string::npos) schema = "'" + m.table().substr(0, dot).append("'");
  const std::string name = dot == std::string::npos ? m.table() : m.table().substr(dot + 1);
  std::vector<std::vector<std::string>> rows;
  if (!s.query("SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = " +
                   schema + " AND LOWER(TABLE_NAME) = LOWER('" + name + "')",
               rows))
    return "cannot look the table up: " + s.error();
  auto exact = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r[1] == name; });
  if (exact == rows.end() && rows.size() == 1) exact = rows.begin();
  if (exact == rows.end()) return "no such table in the database (weir fills a table of yours; create it first)";
  if ((*exact)[2] != "BASE TABLE") return "it is not a table (a view or another kind of relation)";
  const std::string table_schema = (*exact)[0], table_name = (*exact)[1];
  out.table = backquoted(table_schema) + "." + backquoted(table_name);
  const std::string where = " WHERE TABLE_SCHEMA = '" + table_schema + "' AND TABLE_NAME = '" + table_name + "'";

  if (!s.query("SELECT COLUMN_NAME, COLUMN_TYPE, DATA_TYPE, COALESCE(CHARACTER_MAXIMUM_LENGTH, 0), IS_NULLABLE, "
               "COLUMN_DEFAULT IS NOT NULL OR EXTRA LIKE '%auto_increment%', "
               "COALESCE(GENERATION_EXPRESSION, '') <> '' FROM information_schema.COLUMNS" + where +
                   " ORDER BY ORDINAL_POSITION",
               rows))
    return "cannot read its columns: " + s.error();
  std::vector<column_info> found;
  for (const auto& r : rows)
    found.push_back({r[0], r[1], r[2], std::atoll(r[3].c_str()), r[4] == "NO", r[5] == "1", r[6] == "1"});
  std::vector<const column_info*> mapped;
  for (const auto& column : m.columns()) {
    auto it = std::find_if(found.begin(), found.end(), [&](const column_info& c) { return same_name(c.name, column); });
    if (it == found.end()) {
      std::string have;
      for (const auto& f : found) have += (have.empty() ? "" : ", ") + f.name;
      return "it has no column " + column + " (its columns: " + have + ")";
    }
    if (it->generated) return "column " + it->name + " is generated: it takes no value";
    mapped.push_back(&*it);
  }
  const auto& id = *mapped.front();
  if (!holds_record_id(id))
    return "column " + id.name + " is " + id.type +
           ", which cannot hold a record id (64 characters): make it char(64), varchar(64) or longer";
  if (!id.not_null)
    return "column " + id.name +
           " may be NULL: declare it NOT NULL (a primary key is), which is how a clash on another unique key is "
           "refused instead of dropping a record";
  if (!s.query("SELECT INDEX_NAME, COUNT(*), MAX(COLUMN_NAME), MAX(SUB_PART IS NOT NULL) FROM "
               "information_schema.STATISTICS" + where + " AND NON_UNIQUE = 0 GROUP BY INDEX_NAME",
               rows))
    return "cannot read its indexes: " + s.error();
  const bool unique = std::any_of(rows.begin(), rows.end(), [&](const auto& r) {
    return r[1] == "1" && same_name(r[2], id.name) && r[3] == "0";
  });
  if (!unique)
    return "column " + id.name +
           " is not unique on its own (make it the primary key or give it a unique index of its own, over its whole "
           "length): a record delivered again would be a second row";
  for (const auto& c : found)
    if (c.not_null && !c.has_default && !c.generated && std::find(mapped.begin(), mapped.end(), &c) == mapped.end())
      return "column " + c.name + " is NOT NULL without a default and not mapped: every row would be refused (map it "
             "in columns or give it a default)";
  out.columns.clear();
  for (const auto* c : mapped) out.columns.push_back(backquoted(c->name));
  return {};
}

}  // namespace weir
