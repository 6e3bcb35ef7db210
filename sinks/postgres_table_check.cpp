#include "sinks/postgres_table_check.hpp"

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>

namespace weir {

namespace {

using result_ptr = std::unique_ptr<PGresult, decltype(&PQclear)>;

/// Runs `sql` with text parameters; nullptr with `why` set when it fails.
result_ptr query(PGconn* conn, const char* sql, std::vector<std::string> params, std::string& why) {
  std::vector<const char*> values;
  for (const auto& p : params) values.push_back(p.c_str());
  result_ptr r(PQexecParams(conn, sql, static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0),
               &PQclear);
  if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) {
    why = PQresultErrorMessage(r.get());
    why = why.substr(0, why.find('\n'));
    return result_ptr(nullptr, &PQclear);
  }
  return r;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string quoted(PGconn* conn, const std::string& name) {
  char* q = PQescapeIdentifier(conn, name.c_str(), name.size());
  std::string out = q ? q : "\"" + name + "\"";
  PQfreemem(q);
  return out;
}

struct column_info {
  std::string name, type, base;  // type as written (format_type); base: the type under a domain
  int num = 0, length = -1;      // length: of varchar(n)/char(n), -1 when unbounded
  bool not_null = false, has_default = false, generated = false, identity_always = false;
};

constexpr const char* find_table =
    "SELECT c.oid, c.relkind, quote_ident(n.nspname) || '.' || quote_ident(c.relname) "
    "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass($1)";
constexpr const char* table_columns =
    "SELECT a.attname, a.attnum, a.attnotnull, a.atthasdef OR a.attidentity <> '', a.attgenerated <> '', "
    "format_type(a.atttypid, a.atttypmod), b.typname, COALESCE(NULLIF(a.atttypmod, -1), t.typtypmod), "
    "a.attidentity = 'a' "
    "FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
    "JOIN pg_type b ON b.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END "
    "WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum";
/// A unique index ON CONFLICT (column) can use: on that column alone, whole, not deferred.
constexpr const char* insert_rules = "SELECT 1 FROM pg_rewrite WHERE ev_class = $1 AND ev_type = '3'";
constexpr const char* unique_on =
    "SELECT 1 FROM pg_index WHERE indrelid = $1 AND indisunique AND indimmediate AND indpred IS NULL "
    "AND indexprs IS NULL AND indnkeyatts = 1 AND indkey[0] = $2";

/// Whether a column of this base type and length holds a record id as it is.
bool holds_record_id(const column_info& c) {
  if (c.base == "text" || c.base == "citext") return true;
  // varchar(n)/char(n): the typmod is n + 4; an id has 64 characters.
  if (c.base == "varchar") return c.length < 0 || c.length - 4 >= 64;
  if (c.base == "bpchar") return c.length - 4 == 64;
  return false;
}

}  // namespace

std::string check_postgres_table(PGconn* conn, const row_mapping& m, postgres_table& out) {
  std::string why;
  // As written first ("Events" is Events), then as PostgreSQL reads it unquoted (events).
  result_ptr table(nullptr, &PQclear);
  for (const auto& name : {quoted_sql_name(m.table()), m.table()}) {
    table = query(conn, find_table, {name}, why);
    if (!table) return "cannot look the table up: " + why;
    if (PQntuples(table.get()) == 1) break;
  }
  if (PQntuples(table.get()) != 1) return "no such table in the database (weir fills a table of yours; create it first)";
  const std::string relkind = PQgetvalue(table.get(), 0, 1);
  if (relkind != "r" && relkind != "p") return "it is not a table (a view, a sequence or another kind of relation)";
  const std::string oid = PQgetvalue(table.get(), 0, 0);
  out.table = PQgetvalue(table.get(), 0, 2);

  auto cols = query(conn, table_columns, {oid}, why);
  if (!cols) return "cannot read its columns: " + why;
  std::vector<column_info> found;
  for (int i = 0; i < PQntuples(cols.get()); ++i) {
    column_info c;
    c.name = PQgetvalue(cols.get(), i, 0);
    c.num = std::stoi(PQgetvalue(cols.get(), i, 1));
    c.not_null = PQgetvalue(cols.get(), i, 2)[0] == 't';
    c.has_default = PQgetvalue(cols.get(), i, 3)[0] == 't';
    c.generated = PQgetvalue(cols.get(), i, 4)[0] == 't';
    c.type = PQgetvalue(cols.get(), i, 5);
    c.base = PQgetvalue(cols.get(), i, 6);
    c.length = std::stoi(PQgetvalue(cols.get(), i, 7));
    c.identity_always = PQgetvalue(cols.get(), i, 8)[0] == 't';
    found.push_back(std::move(c));
  }
  auto find = [&](const std::string& name) -> const column_info* {
    for (const auto& n : {name, lower(name)}) {
      auto it = std::find_if(found.begin(), found.end(), [&](const column_info& c) { return c.name == n; });
      if (it != found.end()) return &*it;
    }
    return nullptr;
  };
  std::vector<const column_info*> mapped;
  for (const auto& column : m.columns()) {
    const auto* c = find(column);
    if (!c) {
      std::string have;
      for (const auto& f : found) have += (have.empty() ? "" : ", ") + f.name;
      return "it has no column " + column + " (its columns: " + have + ")";
    }
    if (c->generated) return "column " + c->name + " is generated: it takes no value";
    if (c->identity_always)
      return "column " + c->name + " is GENERATED ALWAYS AS IDENTITY: it takes no value (leave it out of columns, or "
             "make it BY DEFAULT)";
    mapped.push_back(c);
  }
  const auto& id = *mapped.front();
  if (!holds_record_id(id))
    return "column " + id.name + " is " + id.type +
           ", which cannot hold a record id (64 hex characters): make it text, varchar(64) or char(64)";
  auto unique = query(conn, unique_on, {oid, std::to_string(id.num)}, why);
  if (!unique) return "cannot read its indexes: " + why;
  if (PQntuples(unique.get()) == 0)
    return "column " + id.name +
           " is not unique on its own (make it the primary key or give it a unique index of its own, not deferrable): "
           "a record delivered again would be a second row";
  for (const auto& c : found)
    if (c.not_null && !c.has_default && !c.generated &&
        std::find(mapped.begin(), mapped.end(), &c) == mapped.end())
      return "column " + c.name + " is NOT NULL without a default and not mapped: every row would be refused (map it "
             "in columns or give it a default)";
  auto rules = query(conn, insert_rules, {oid}, why);
  if (!rules) return "cannot read its rules: " + why;
  if (PQntuples(rules.get()) > 0)
    return "it has a rule ON INSERT, with which PostgreSQL refuses INSERT … ON CONFLICT (how a record delivered "
           "again is skipped): use a trigger instead";
  out.columns.clear();
  for (const auto* c : mapped) out.columns.push_back(quoted(conn, c->name));
  return {};
}

}  // namespace weir
