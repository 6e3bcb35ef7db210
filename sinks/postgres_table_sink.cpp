// postgres into a table of the user's: each record a row, the record id in
// the id column and each mapped column's value from the payload as text
// (sinks/row_mapping.hpp), which PostgreSQL reads as the column's type.
//
// A batch goes in bulk: one text COPY straight into the table, the
// server's own bulk load (COPY parses each value as its column's type; the
// table's triggers, foreign keys and checks run). COPY cannot skip a row
// that is already there, and a batch delivered again after a crash or an
// ambiguous commit holds such rows: when it fails, the batch goes as one
// COPY into a session's temporary staging table made from the user's
// columns, then one INSERT … SELECT … ON CONFLICT (id column) DO NOTHING,
// which skips what an earlier delivery wrote — the exactly-once-by-id a
// retry needs. When that refuses something that is a row's fault (SQLSTATE
// classes 22, 23, ...) the batch goes again row by row under savepoints: those rows are dead letters with
// PostgreSQL's reason, the rest commit once. A table that changed under the
// sink (a column dropped, a privilege revoked: class 42) is retried, never
// dead-lettered; the next connection checks the table again and says what
// is missing.
#include "sinks/postgres_table_sink.hpp"

#include <algorithm>
#include <stdexcept>

#include "sinks/postgres_session.hpp"
#include "sinks/postgres_table_check.hpp"
#include "sinks/row_mapping.hpp"
#include "sinks/sink_types.hpp"
#include "sinks/tsv.hpp"

namespace weir {

namespace {

/// Why PostgreSQL cannot take this row's values as they are, or "".
std::string unstorable(const std::vector<std::optional<std::string>>& row, const row_mapping& m) {
  for (std::size_t c = 0; c < row.size(); ++c)
    if (row[c] && row[c]->find('\0') != std::string::npos)
      return "the value for column " + m.columns()[c] + " holds a NUL character, which PostgreSQL text cannot";
  return {};
}

class postgres_table_sink final : public sink {
 public:
  postgres_table_sink(row_mapping mapping, std::string conninfo, std::shared_ptr<const reloadable_secret> password,
                      int timeout_ms)
      : mapping_(std::move(mapping)),
        session_(std::move(conninfo), std::move(password), timeout_ms,
                 [this](postgres_session& s) { return prepare(s); }) {}

  commit_result commit(const std::vector<sink_record>& batch) override {
    if (!session_.connected()) return commit_result::retry(session_.error());
    commit_result result;
    rows_.resize(batch.size());
    kept_.clear();
    for (std::size_t i = 0; i < batch.size(); ++i) {
      auto why = mapping_.values(batch[i], rows_[i]);
      if (why.empty()) why = unstorable(rows_[i], mapping_);
      if (why.empty()) kept_.push_back(i);
      else result.rejected.emplace_back(i, std::move(why));
    }
    if (kept_.empty()) return result;
    std::string state;
    if (copy_all(state)) return result;
    if (pg_transient_state(state)) return session_.lost(state);
    return session_.commit_row_by_row(
        kept_, [this](std::size_t i, std::string& st) { return session_.exec_params(insert_row_, rows_[i], st); },
        std::move(result));
  }

  sink_health probe(std::string& why) override { return session_.probe(why); }

 private:
  /// Checks the table (it may have changed since the last connection) and
  /// makes this session's staging table.
  bool prepare(postgres_session& s) {
    postgres_table t;
    if (auto why = check_postgres_table(s.conn(), mapping_, t); !why.empty()) {
      s.set_error("postgres: sink.postgres.table = " + mapping_.table() + ": " + why);
      return false;
    }
    std::string columns;
    for (const auto& c : t.columns) columns += (columns.empty() ? "" : ", ") + c;
    const std::string id = t.columns.front();
    copy_direct_ = "COPY " + t.table + "(" + columns + ") FROM STDIN";
    copy_ = "COPY weir_stage(" + columns + ") FROM STDIN";
    insert_staged_ = "INSERT INTO " + t.table + "(" + columns + ") SELECT " + columns +
                     " FROM weir_stage ON CONFLICT (" + id + ") DO NOTHING";
    insert_row_ = "INSERT INTO " + t.table + "(" + columns + ") VALUES (";
    for (std::size_t i = 1; i <= t.columns.size(); ++i) insert_row_ += (i > 1 ? ",$" : "$") + std::to_string(i);
    insert_row_ += ") ON CONFLICT (" + id + ") DO NOTHING";
    if (!s.exec("DROP TABLE IF EXISTS pg_temp.weir_stage") ||
        !s.exec("CREATE TEMP TABLE weir_stage ON COMMIT DELETE ROWS AS SELECT " + columns + " FROM " + t.table +
                " WITH NO DATA")) {
      s.set_error("postgres: cannot make the staging table for " + mapping_.table() + ": " + first_line(s.error()));
      return false;
    }
    return true;
  }

  /// The kept rows in one COPY into the table, else (a row already there,
  /// or any refusal) in one COPY into the staging table and one INSERT that
  /// skips rows already there; false (each transaction rolled back) when
  /// that fails too, or the first failure was one a retry can cure.
  bool copy_all(std::string& state) {
    copy_buffer_.clear();
    for (std::size_t i : kept_) {
      const auto& row = rows_[i];
      for (std::size_t c = 0; c < row.size(); ++c) {
        if (c) copy_buffer_ += '\t';
        append_tsv_value(copy_buffer_, row[c]);
      }
      copy_buffer_ += '\n';
    }
    if (!session_.exec("BEGIN", &state)) return false;
    if (session_.copy_in(copy_direct_.c_str(), copy_buffer_, state) && session_.exec("COMMIT", &state)) return true;
    session_.exec("ROLLBACK");
    if (pg_transient_state(state) || !session_.exec("BEGIN", &state)) return false;
    if (session_.copy_in(copy_.c_str(), copy_buffer_, state) && session_.exec(insert_staged_, &state) &&
        session_.exec("COMMIT", &state))
      return true;
    session_.exec("ROLLBACK");
    return false;
  }

  row_mapping mapping_;
  std::string copy_direct_, copy_, insert_staged_, insert_row_;  // made by prepare, for the table as it is
  std::vector<std::vector<std::optional<std::string>>> rows_;  // the batch's values, kept between batches
  std::vector<std::size_t> kept_;                               // rows the mapping did not refuse
  std::string copy_buffer_;
  postgres_session session_;  // last: its prepare uses the members above
};

class postgres_table_factory final : public sink_factory {
 public:
  postgres_table_factory(table_mapping m, std::string conninfo, std::shared_ptr<reloadable_secret> password,
                         int timeout_ms)
      : mapping_(std::move(m)), conninfo_(std::move(conninfo)), password_(std::move(password)), timeout_ms_(timeout_ms) {}
  std::unique_ptr<sink> make() override {
    return std::make_unique<postgres_table_sink>(row_mapping(mapping_), conninfo_, password_, timeout_ms_);
  }
  std::string type() const override { return "postgres"; }
  secret_reload reload_secrets() override { return reload_each({password_.get()}); }

 private:
  table_mapping mapping_;
  std::string conninfo_;
  std::shared_ptr<reloadable_secret> password_;
  int timeout_ms_;
};

}  // namespace

std::shared_ptr<sink_factory> make_postgres_table_sink_factory(const table_mapping& mapping,
                                                               const std::string& conninfo,
                                                               std::shared_ptr<reloadable_secret> password,
                                                               int timeout_ms) {
  // Looked at once now, briefly: a table that is wrong is a configuration
  // to fix before starting; a server that is not up yet is not.
  const row_mapping m(mapping);
  std::string wrong;
  postgres_session look(conninfo, password, std::min(timeout_ms, 2000), [&](postgres_session& s) {
    postgres_table t;
    wrong = check_postgres_table(s.conn(), m, t);
    return true;
  });
  if (look.connected() && !wrong.empty())
    throw std::runtime_error("sink.postgres.table = " + mapping.table + ": " + wrong);
  return std::make_shared<postgres_table_factory>(mapping, conninfo, std::move(password), timeout_ms);
}

}  // namespace weir
