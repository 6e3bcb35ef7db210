// mysql into a table of the user's: each record a row, the record id in the
// id column and each mapped column's value from the payload as text
// (sinks/row_mapping.hpp), which the server converts to the column's type
// under strict SQL mode: a value the column cannot hold is an error, never
// a silent change. The session speaks utf8mb4, the values' encoding.
//
// A batch goes as multi-row INSERTs with ON DUPLICATE KEY UPDATE: a record
// delivered again is a no-op on the id column. A clash on another unique
// key of the table is not the same record: the update then sets the id
// column to NULL, which strict mode refuses (error 1048, the id column is
// NOT NULL by the start-up check), so that record is a dead letter instead
// of silently dropped. A row's fault (a value, a constraint, a trigger's
// SIGNAL) makes the batch go again row by row; those rows are dead letters
// with the server's error, the rest commit. Everything else is retried: a
// table that changed under the sink (1054 no column, 1146 no table) is
// checked again on the next connection, which says what is missing.
#include "sinks/mysql_table_sink.hpp"

#include <stdexcept>

#include "sinks/mysql_table_check.hpp"
#include "sinks/row_mapping.hpp"
#include "sinks/sink_types.hpp"

namespace weir {

namespace {

/// Beside its escaped values, a row's text (quotes, commas, NULLs) never
/// takes more than this per column.
constexpr std::size_t column_fixed_bytes = 8;

class mysql_table_sink final : public sink {
 public:
  mysql_table_sink(row_mapping mapping, const mysql_settings& settings, std::shared_ptr<const reloadable_secret> password)
      : mapping_(std::move(mapping)),
        session_(settings, std::move(password), [this](mysql_session& s) { return prepare(s); }) {}

  commit_result commit(const std::vector<sink_record>& batch) override {
    if (!session_.connected()) return commit_result::retry(session_.error());
    std::vector<std::pair<std::size_t, std::string>> refused;
    std::vector<std::size_t> kept;
    rows_.resize(batch.size());
    for (std::size_t i = 0; i < batch.size(); ++i) {
      auto why = mapping_.values(batch[i], rows_[i]);
      if (why.empty() && !session_.row_fits(row_bytes(i), head_.size() + tail_.size()))
        why = session_.too_big_reason(batch[i].payload.size());
      if (why.empty()) kept.push_back(i);
      else refused.emplace_back(i, std::move(why));
    }
    const mysql_session::statement st{head_, tail_, [this](std::size_t i) { return row_bytes(i); },
                                      [this](std::string& sql, std::size_t i) { append_row(sql, i); }};
    return session_.commit(st, kept, std::move(refused));
  }

  sink_health probe(std::string& why) override { return session_.probe(why); }

 private:
  /// Checks the table (it may have changed since the last connection) and
  /// writes the statement for it as it is.
  bool prepare(mysql_session& s) {
    mysql_table t;
    if (auto why = check_mysql_table(s, mapping_, t); !why.empty()) {
      s.set_error("mysql: sink.mysql.table = " + mapping_.table() + ": " + why);
      return false;
    }
    std::string columns;
    for (const auto& c : t.columns) columns += (columns.empty() ? "" : ", ") + c;
    const std::string& id = t.columns.front();
    head_ = "INSERT INTO " + t.table + "(" + columns + ") VALUES ";
    tail_ = " ON DUPLICATE KEY UPDATE " + id + " = IF(" + id + " <=> VALUES(" + id + "), " + id + ", NULL)";
    return true;
  }

  std::size_t row_bytes(std::size_t i) const {
    std::size_t n = 0;
    for (const auto& v : rows_[i]) n += (v ? mysql_session::escaped_size(v->data(), v->size()) : 0) + column_fixed_bytes;
    return n;
  }

  void append_row(std::string& sql, std::size_t i) const {
    sql += '(';
    bool first = true;
    for (const auto& v : rows_[i]) {
      if (!first) sql += ',';
      first = false;
      if (!v) {
        sql += "NULL";
        continue;
      }
      sql += '\'';
      session_.append_escaped(sql, v->data(), v->size());
      sql += '\'';
    }
    sql += ')';
  }

  row_mapping mapping_;
  std::string head_, tail_;                                    // made by prepare, for the table as it is
  std::vector<std::vector<std::optional<std::string>>> rows_;  // the batch's values, kept between batches
  mysql_session session_;                                      // last: its prepare uses the members above
};

class mysql_table_factory final : public sink_factory {
 public:
  mysql_table_factory(table_mapping m, mysql_settings settings, std::shared_ptr<reloadable_secret> password)
      : mapping_(std::move(m)), settings_(std::move(settings)), password_(std::move(password)) {}
  std::unique_ptr<sink> make() override {
    return std::make_unique<mysql_table_sink>(row_mapping(mapping_), settings_, password_);
  }
  std::string type() const override { return "mysql"; }
  secret_reload reload_secrets() override { return reload_each({password_.get()}); }

 private:
  table_mapping mapping_;
  mysql_settings settings_;
  std::shared_ptr<reloadable_secret> password_;
};

}  // namespace

std::shared_ptr<sink_factory> make_mysql_table_sink_factory(const table_mapping& mapping, mysql_settings settings,
                                                            std::shared_ptr<reloadable_secret> password) {
  init_mysql_library();
  settings.charset = "utf8mb4";
  // Looked at once now, briefly: a table that is wrong is a configuration
  // to fix before starting; a server that is not up yet is not.
  const row_mapping m(mapping);
  std::string wrong;
  auto brief = settings;
  brief.timeout_ms = std::min(settings.timeout_ms, 2000);
  mysql_session look(brief, password, [&](mysql_session& s) {
    mysql_table t;
    wrong = check_mysql_table(s, m, t);
    return true;
  });
  if (look.connected() && !wrong.empty())
    throw std::runtime_error("sink.mysql.table = " + mapping.table + ": " + wrong);
  return std::make_shared<mysql_table_factory>(mapping, std::move(settings), std::move(password));
}

}  // namespace weir
