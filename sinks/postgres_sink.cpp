// postgres: one transaction per batch into weir_records, keyed by the
// record's coordinate and id (node, shard, segment sequence, index, id). That
// deduplicates exactly as the id alone did, and a coordinate another record
// used too is a different row, never a silent drop; the key's leading columns
// grow with every record, so inserts append to its index instead of landing
// on a random page of it.
//
// A batch goes in with one binary COPY, the server's own bulk load. COPY
// cannot skip a row that is already there, and a batch redelivered after a
// crash or an ambiguous commit can hold such rows: when the COPY fails for
// any reason but a lost connection, the batch is rolled back and sent again
// as multi-row INSERT ... ON CONFLICT (node, shard, seq, idx, id) DO NOTHING,
// which also covers a table whose column types binary COPY cannot match.
//
// A table from before (id TEXT PRIMARY KEY, no seq column) is moved to the
// coordinate key the first time a commit slot connects, under an advisory
// lock so that only one slot does it.
//
// Errors by SQLSTATE: connection loss (08), serialization (40001), deadlock
// (40P01), operator intervention (57), resources (53), system (58) and any
// lost connection are transient: the batch is retried. A data error (22, 23,
// or anything else tied to a row) makes the sink retry the batch row by row
// under savepoints: the offending rows are dead-lettered, the rest commit.
#include <libpq-fe.h>

#include <cstring>
#include <stdexcept>

#include "sinks/postgres_copy.hpp"

#include "sinks/secret.hpp"
#include "sinks/sink_types.hpp"

namespace weir {

namespace {

constexpr const char* create_table =
    "CREATE TABLE IF NOT EXISTS weir_records(node INTEGER NOT NULL DEFAULT 0, shard INTEGER NOT NULL, "
    "seq BIGINT NOT NULL, idx BIGINT NOT NULL, id TEXT NOT NULL, segment TEXT NOT NULL, ts BIGINT, payload BYTEA, "
    "PRIMARY KEY (node, shard, seq, idx, id))";
/// Serialises the commit slots' schema work (any constant of our own).
constexpr const char* schema_lock = "SELECT pg_advisory_xact_lock(2020617)";
/// The primary key constraint of a weir_records table of the first schema (no rows: none to move).
constexpr const char* first_schema_key =
    "SELECT c.conname FROM pg_constraint c WHERE c.conrelid = 'weir_records'::regclass AND c.contype = 'p' "
    "AND NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
    "AND table_name = 'weir_records' AND column_name = 'seq')";
/// Moves it to the coordinate key, given its old key's (quoted) name; the
/// sequence comes from the segment name ("shard_NN/seg_SSSSSSSS.wab").
std::string migrate_first_schema(const std::string& old_key) {
  return "ALTER TABLE weir_records ADD COLUMN node INTEGER NOT NULL DEFAULT 0, ADD COLUMN seq BIGINT;"
         "UPDATE weir_records SET seq = CAST(substring(segment from 'seg_([0-9]+)') AS BIGINT);"
         "ALTER TABLE weir_records DROP CONSTRAINT " + old_key + ";"
         "ALTER TABLE weir_records ALTER COLUMN seq SET NOT NULL, ALTER COLUMN id SET NOT NULL, "
         "ALTER COLUMN segment SET NOT NULL, ADD PRIMARY KEY (node, shard, seq, idx, id)";
}
constexpr int columns_per_row = 8;
constexpr std::size_t rows_per_statement = 1000;  // 7 parameters each, far under the 65535 limit

bool transient_state(const std::string& s) {
  if (s.empty()) return true;  // no SQLSTATE: the connection itself failed
  const std::string cls = s.substr(0, 2);
  return cls == "08" || cls == "53" || cls == "57" || cls == "58" || s == "40001" || s == "40P01" || cls == "XX";
}

struct pg_result {
  PGresult* r;
  explicit pg_result(PGresult* p) : r(p) {}
  ~pg_result() { PQclear(r); }
  bool ok() const {
    const auto st = PQresultStatus(r);
    return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
  }
  std::string sqlstate() const {
    const char* s = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    return s ? s : "";
  }
};

class postgres_sink final : public sink {
 public:
  postgres_sink(std::string conninfo, std::shared_ptr<const reloadable_secret> password, int timeout_ms)
      : conninfo_(std::move(conninfo)), password_(std::move(password)), timeout_ms_(timeout_ms) {}
  ~postgres_sink() override {
    if (conn_) PQfinish(conn_);
  }

  commit_result commit(const std::vector<sink_record>& batch) override {
    if (!connected()) return commit_result::retry(error_);
    std::string state;
    if (copy_all(batch, state)) return commit_result::ok();
    if (transient_state(state)) return lost(state);
    if (insert_all(batch, state)) return commit_result::ok();
    if (transient_state(state)) return lost(state);
    return commit_row_by_row(batch);
  }

  sink_health probe(std::string& why) override {
    if (!connected()) {
      why = error_;
      return sink_health::down;
    }
    pg_result r(PQexec(conn_, "SELECT 1"));
    if (!r.ok()) {
      error_ = PQresultErrorMessage(r.r);  // this failure, not the last commit's
      why = lost(r.sqlstate()).error;
      return sink_health::down;
    }
    return sink_health::healthy;
  }

 private:
  bool connected() {
    if (conn_ && PQstatus(conn_) == CONNECTION_OK) return true;
    if (conn_) PQfinish(conn_);
    const std::string timeout = std::to_string(std::max(1, timeout_ms_ / 1000));
    const std::string password = password_->value();  // as of now: a reload may have rotated it
    const char* keys[] = {"dbname", "password", "connect_timeout", "application_name", nullptr};
    const char* values[] = {conninfo_.c_str(), password.empty() ? nullptr : password.c_str(), timeout.c_str(),
                            "weir", nullptr};
    conn_ = PQconnectdbParams(keys, values, 1);
    if (PQstatus(conn_) != CONNECTION_OK) {
      error_ = std::string("postgres connection failed: ") + PQerrorMessage(conn_);
      while (!error_.empty() && error_.back() == '\n') error_.pop_back();
      return false;
    }
    // libpq prints server notices ("relation already exists, skipping") to
    // stderr, which is the daemon's structured log: keep them out of it.
    PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);
    exec("SET statement_timeout = " + std::to_string(timeout_ms_));
    if (!prepare_table()) {
      error_ = "postgres: cannot prepare weir_records: " + first_line(error_);
      PQfinish(conn_);
      conn_ = nullptr;
      return false;
    }
    return true;
  }

  /// Creates the table, or moves one of the first schema to the coordinate
  /// key: one transaction, one slot at a time.
  bool prepare_table() {
    if (!exec("BEGIN") || !exec(schema_lock) || !exec(create_table)) {
      exec("ROLLBACK");
      return false;
    }
    pg_result old_key(PQexec(conn_, first_schema_key));
    if (!old_key.ok()) {
      error_ = PQresultErrorMessage(old_key.r);
      exec("ROLLBACK");
      return false;
    }
    if (PQntuples(old_key.r) == 1) {
      // Filling seq and building the new key take time in proportion to the
      // table: sink.timeout_ms must not cut them off (and retry forever).
      if (!exec("SET LOCAL statement_timeout = 0")) {
        exec("ROLLBACK");
        return false;
      }
      const char* raw = PQgetvalue(old_key.r, 0, 0);
      char* quoted = PQescapeIdentifier(conn_, raw, std::strlen(raw));
      const std::string sql = migrate_first_schema(quoted ? quoted : "weir_records_pkey");
      PQfreemem(quoted);
      if (!exec(sql)) {
        exec("ROLLBACK");
        return false;
      }
    }
    return exec("COMMIT");
  }

  bool exec(const std::string& sql, std::string* state = nullptr) {
    pg_result r(PQexec(conn_, sql.c_str()));
    if (!r.ok()) {
      error_ = PQresultErrorMessage(r.r);
      if (state) *state = r.sqlstate();
      return false;
    }
    return true;
  }

  /// INSERTs `rows` (positions into batch) with one statement per 1000 rows.
  bool insert(const std::vector<sink_record>& batch, const std::vector<std::size_t>& rows, std::string& state) {
    for (std::size_t from = 0; from < rows.size(); from += rows_per_statement) {
      const std::size_t n = std::min(rows_per_statement, rows.size() - from);
      std::string sql = "INSERT INTO weir_records(node, shard, seq, idx, id, segment, ts, payload) VALUES ";
      std::vector<std::string> text;  // owns the text parameters
      text.reserve(n * (columns_per_row - 1));
      std::vector<const char*> values;
      std::vector<int> lengths, formats;
      for (std::size_t k = 0; k < n; ++k) {
        const auto& r = batch[rows[from + k]];
        const std::size_t p = k * columns_per_row;
        sql += (k ? ",(" : "(");
        for (int c = 1; c <= columns_per_row; ++c) {
          sql += '$';
          sql += std::to_string(p + c);
          sql += (c < columns_per_row ? ',' : ')');
        }
        text.push_back(std::to_string(r.node));
        text.push_back(std::to_string(r.shard));
        text.push_back(std::to_string(r.sequence));
        text.push_back(std::to_string(r.index));
        text.push_back(r.id);
        text.push_back(r.segment);
        text.push_back(std::to_string(r.ts_ns));
      }
      sql += " ON CONFLICT (node, shard, seq, idx, id) DO NOTHING";
      for (std::size_t k = 0; k < n; ++k) {
        const auto& r = batch[rows[from + k]];
        for (int c = 0; c < columns_per_row - 1; ++c) {
          values.push_back(text[k * (columns_per_row - 1) + c].c_str());
          lengths.push_back(0);
          formats.push_back(0);
        }
        values.push_back(reinterpret_cast<const char*>(r.payload.data()));
        lengths.push_back(static_cast<int>(r.payload.size()));
        formats.push_back(1);
      }
      pg_result res(PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                                 lengths.data(), formats.data(), 0));
      if (!res.ok()) {
        error_ = PQresultErrorMessage(res.r);
        state = res.sqlstate();
        return false;
      }
    }
    return true;
  }

  /// The batch in one COPY, then COMMIT; false (and the transaction rolled
  /// back) when either fails.
  bool copy_all(const std::vector<sink_record>& batch, std::string& state) {
    if (!exec("BEGIN", &state)) return false;
    if (copy(batch, state) && exec("COMMIT", &state)) return true;
    exec("ROLLBACK");
    return false;
  }

  bool copy(const std::vector<sink_record>& batch, std::string& state) {
    pg_result started(PQexec(conn_, copy_statement));
    if (PQresultStatus(started.r) != PGRES_COPY_IN) {
      error_ = PQresultErrorMessage(started.r);
      state = started.sqlstate();
      return false;
    }
    encode_copy_rows(batch, copy_buffer_);
    if (PQputCopyData(conn_, copy_buffer_.data(), static_cast<int>(copy_buffer_.size())) != 1 ||
        PQputCopyEnd(conn_, nullptr) != 1) {
      error_ = PQerrorMessage(conn_);
      state.clear();  // the connection failed under the copy
      return false;
    }
    bool ok = true;
    // The COPY's result, then the null that ends the command.
    while (PGresult* r = PQgetResult(conn_)) {
      pg_result res(r);
      if (!res.ok() && ok) {
        ok = false;
        error_ = PQresultErrorMessage(r);
        state = res.sqlstate();
      }
    }
    return ok;
  }

  bool insert_all(const std::vector<sink_record>& batch, std::string& state) {
    std::vector<std::size_t> rows(batch.size());
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
    if (!exec("BEGIN", &state)) return false;
    if (insert(batch, rows, state) && exec("COMMIT", &state)) return true;
    exec("ROLLBACK");
    return false;
  }

  /// A data error somewhere in the batch: find the rows the database refuses.
  commit_result commit_row_by_row(const std::vector<sink_record>& batch) {
    commit_result out;
    std::string state;
    if (!exec("BEGIN", &state)) return lost(state);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (!exec("SAVEPOINT row", &state)) return lost(state);
      if (insert(batch, {i}, state)) {
        if (!exec("RELEASE SAVEPOINT row", &state)) return lost(state);
        continue;
      }
      if (transient_state(state)) return lost(state);
      out.rejected.emplace_back(i, "postgres SQLSTATE " + state + ": " + first_line(error_));
      if (!exec("ROLLBACK TO SAVEPOINT row", &state)) return lost(state);
    }
    if (!exec("COMMIT", &state)) return lost(state);
    return out;
  }

  commit_result lost(const std::string& state) {
    auto r = commit_result::retry("postgres" + (state.empty() ? std::string() : " SQLSTATE " + state) + ": " +
                                      first_line(error_.empty() ? PQerrorMessage(conn_) : error_),
                                  !state.empty() && PQstatus(conn_) == CONNECTION_OK);
    if (PQstatus(conn_) != CONNECTION_OK || transient_state(state)) {
      PQfinish(conn_);
      conn_ = nullptr;
    } else {
      exec("ROLLBACK");
    }
    return r;
  }

  static std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

  std::string conninfo_;
  std::shared_ptr<const reloadable_secret> password_;
  int timeout_ms_;
  PGconn* conn_ = nullptr;
  std::string error_;
  std::string copy_buffer_;  // kept between batches: one allocation for the slot's life
};

class postgres_factory final : public sink_factory {
 public:
  postgres_factory(std::string conninfo, std::shared_ptr<reloadable_secret> password, int timeout_ms)
      : conninfo_(std::move(conninfo)), password_(std::move(password)), timeout_ms_(timeout_ms) {}
  std::unique_ptr<sink> make() override { return std::make_unique<postgres_sink>(conninfo_, password_, timeout_ms_); }
  std::string type() const override { return "postgres"; }
  // Open connections keep the session they authenticated; new ones use the new password.
  secret_reload reload_secrets() override { return reload_each({password_.get()}); }

 private:
  std::string conninfo_;
  std::shared_ptr<reloadable_secret> password_;
  int timeout_ms_;
};

}  // namespace

std::shared_ptr<sink_factory> make_postgres_sink_factory(const config& cfg) {
  return std::make_shared<postgres_factory>(
      cfg.sink.postgres.conninfo,
      std::make_shared<reloadable_secret>("sink.postgres.password_file", cfg.sink.postgres.password_file,
                                          "WEIR_SINK_POSTGRES_PASSWORD"),
      static_cast<int>(cfg.sink.timeout_ms));
}

}  // namespace weir
