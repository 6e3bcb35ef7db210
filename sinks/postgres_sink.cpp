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
// With payload_as: text the payload column is TEXT (binary COPY sends text
// as its bytes, as it does bytea); a payload that is not UTF-8, or holds a
// NUL that text cannot, is a dead letter before the COPY.
//
// Errors by SQLSTATE (pg_transient_state): what a retry can cure retries the
// batch. A data error (22, 23, or anything else tied to a row) makes the sink
// retry the batch row by row under savepoints: the offending rows are
// dead-lettered, the rest commit.
#include <libpq-fe.h>

#include <cstring>
#include <stdexcept>

#include "sinks/postgres_copy.hpp"
#include "sinks/postgres_session.hpp"
#include "sinks/postgres_table_sink.hpp"
#include "sinks/secret.hpp"
#include "sinks/sink_types.hpp"
#include "wire/coordinate.hpp"

namespace weir {

namespace {

std::string create_table(payload_form payload_as) {
  return std::string("CREATE TABLE IF NOT EXISTS weir_records(node INTEGER NOT NULL DEFAULT 0, shard INTEGER NOT NULL, "
                     "seq BIGINT NOT NULL, idx BIGINT NOT NULL, id TEXT NOT NULL, segment TEXT NOT NULL, ts BIGINT, "
                     "payload ") +
         (payload_as == payload_form::text ? "TEXT" : "BYTEA") + ", PRIMARY KEY (node, shard, seq, idx, id))";
}
/// The payload column's type, to check it against payload_as.
constexpr const char* payload_type =
    "SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema() "
    "AND table_name = 'weir_records' AND column_name = 'payload'";
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

/// Why an existing weir_records cannot take payloads as `payload_as` says
/// (its payload column is of the other type); "" when it can or is not there.
std::string payload_column_disagrees(PGconn* conn, payload_form payload_as) {
  pg_result payload(PQexec(conn, payload_type));
  if (!payload.ok() || PQntuples(payload.r) != 1) return {};
  const std::string want = payload_as == payload_form::text ? "text" : "bytea";
  const std::string have = PQgetvalue(payload.r, 0, 0);
  if (have == want) return {};
  return "weir_records.payload is " + have + ", but sink.postgres.payload_as is " +
         (want == "text" ? "text" : "bytes") +
         ": set payload_as to match the table, or change the column's type (ALTER TABLE weir_records ALTER payload "
         "TYPE ...)";
}

/// Creates weir_records, or moves one of the first schema to the coordinate
/// key, and checks its payload column against payload_as: one transaction,
/// one slot at a time.
bool prepare_weir_records(postgres_session& s, payload_form payload_as) {
  if (!s.exec("BEGIN") || !s.exec(schema_lock) || !s.exec(create_table(payload_as))) {
    s.set_error("postgres: cannot prepare weir_records: " + first_line(s.error()));
    s.exec("ROLLBACK");
    return false;
  }
  pg_result old_key(PQexec(s.conn(), first_schema_key));
  if (!old_key.ok()) {
    s.set_error("postgres: cannot prepare weir_records: " + first_line(PQresultErrorMessage(old_key.r)));
    s.exec("ROLLBACK");
    return false;
  }
  if (auto why = payload_column_disagrees(s.conn(), payload_as); !why.empty()) {
    s.set_error("postgres: " + why);
    s.exec("ROLLBACK");
    return false;
  }
  if (PQntuples(old_key.r) == 1) {
    // Filling seq and building the new key take time in proportion to the
    // table: sink.timeout_ms must not cut them off (and retry forever).
    const char* raw = PQgetvalue(old_key.r, 0, 0);
    char* quoted = PQescapeIdentifier(s.conn(), raw, std::strlen(raw));
    const std::string sql = migrate_first_schema(quoted ? quoted : "weir_records_pkey");
    PQfreemem(quoted);
    if (!s.exec("SET LOCAL statement_timeout = 0") || !s.exec(sql)) {
      s.set_error("postgres: cannot prepare weir_records: " + first_line(s.error()));
      s.exec("ROLLBACK");
      return false;
    }
  }
  return s.exec("COMMIT");
}

/// Why PostgreSQL's text type cannot hold `payload`, or "" when it can.
std::string not_text(const std::vector<std::uint8_t>& payload) {
  const std::string_view p(reinterpret_cast<const char*>(payload.data()), payload.size());
  if (!wire::is_valid_utf8(p)) return "the payload is not UTF-8 text (sink.postgres.payload_as is text)";
  if (p.find('\0') != std::string_view::npos)
    return "the payload holds a NUL byte, which PostgreSQL text cannot (sink.postgres.payload_as is text)";
  return {};
}

class postgres_sink final : public sink {
 public:
  postgres_sink(std::string conninfo, std::shared_ptr<const reloadable_secret> password, int timeout_ms,
                payload_form payload_as)
      : session_(std::move(conninfo), std::move(password), timeout_ms,
                 [payload_as](postgres_session& s) { return prepare_weir_records(s, payload_as); }),
        payload_as_(payload_as) {}

  commit_result commit(const std::vector<sink_record>& batch) override {
    if (payload_as_ == payload_form::bytes) return commit_all(batch);
    // Text payloads: those text cannot hold are refused before the batch goes.
    std::vector<std::pair<std::size_t, std::string>> refused;
    for (std::size_t i = 0; i < batch.size(); ++i)
      if (auto why = not_text(batch[i].payload); !why.empty()) refused.emplace_back(i, std::move(why));
    if (refused.empty()) return commit_all(batch);
    std::vector<sink_record> kept;
    std::vector<std::size_t> position;  // in batch, of each of kept
    for (std::size_t i = 0, r = 0; i < batch.size(); ++i) {
      if (r < refused.size() && refused[r].first == i) {
        ++r;
        continue;
      }
      kept.push_back(batch[i]);
      position.push_back(i);
    }
    auto result = commit_all(kept);
    if (result.kind != commit_result::outcome::committed) return result;  // settled is 0: all again next time
    for (auto& [at, why] : result.rejected) at = position[at];
    result.rejected.insert(result.rejected.end(), refused.begin(), refused.end());
    return result;
  }

  sink_health probe(std::string& why) override { return session_.probe(why); }

 private:
  commit_result commit_all(const std::vector<sink_record>& batch) {
    if (batch.empty()) return commit_result::ok();
    if (!session_.connected()) return commit_result::retry(session_.error());
    std::string state;
    if (copy_all(batch, state)) return commit_result::ok();
    if (pg_transient_state(state)) return session_.lost(state);
    std::vector<std::size_t> rows(batch.size());
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
    if (insert_all(batch, rows, state)) return commit_result::ok();
    if (pg_transient_state(state)) return session_.lost(state);
    return session_.commit_row_by_row(
        rows, [&](std::size_t i, std::string& st) { return insert(batch, {i}, st); }, {});
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
        formats.push_back(1);  // binary: bytea's bytes, or text's UTF-8
      }
      pg_result res(PQexecParams(session_.conn(), sql.c_str(), static_cast<int>(values.size()), nullptr,
                                 values.data(), lengths.data(), formats.data(), 0));
      if (!res.ok()) {
        session_.set_error(PQresultErrorMessage(res.r));
        state = res.sqlstate();
        return false;
      }
    }
    return true;
  }

  /// The batch in one COPY, then COMMIT; false (and the transaction rolled
  /// back) when either fails.
  bool copy_all(const std::vector<sink_record>& batch, std::string& state) {
    if (!session_.exec("BEGIN", &state)) return false;
    encode_copy_rows(batch, copy_buffer_);
    if (session_.copy_in(copy_statement, copy_buffer_, state) && session_.exec("COMMIT", &state)) return true;
    session_.exec("ROLLBACK");
    return false;
  }

  bool insert_all(const std::vector<sink_record>& batch, const std::vector<std::size_t>& rows, std::string& state) {
    if (!session_.exec("BEGIN", &state)) return false;
    if (insert(batch, rows, state) && session_.exec("COMMIT", &state)) return true;
    session_.exec("ROLLBACK");
    return false;
  }

  postgres_session session_;
  payload_form payload_as_;
  std::string copy_buffer_;  // kept between batches: one allocation for the slot's life
};

class postgres_factory final : public sink_factory {
 public:
  postgres_factory(std::string conninfo, std::shared_ptr<reloadable_secret> password, int timeout_ms,
                   payload_form payload_as)
      : conninfo_(std::move(conninfo)), password_(std::move(password)), timeout_ms_(timeout_ms), payload_as_(payload_as) {}
  std::unique_ptr<sink> make() override {
    return std::make_unique<postgres_sink>(conninfo_, password_, timeout_ms_, payload_as_);
  }
  std::string type() const override { return "postgres"; }
  // Open connections keep the session they authenticated; new ones use the new password.
  secret_reload reload_secrets() override { return reload_each({password_.get()}); }

 private:
  std::string conninfo_;
  std::shared_ptr<reloadable_secret> password_;
  int timeout_ms_;
  payload_form payload_as_;
};

}  // namespace

std::shared_ptr<sink_factory> make_postgres_sink_factory(const config& cfg) {
  const auto& pg = cfg.sink.postgres;
  auto password = std::make_shared<reloadable_secret>("sink.postgres.password_file", pg.password_file,
                                                      "WEIR_SINK_POSTGRES_PASSWORD");
  const int timeout_ms = static_cast<int>(cfg.sink.timeout_ms);
  if (!pg.writes_weir_records()) return make_postgres_table_sink_factory(pg, pg.conninfo, password, timeout_ms);
  // An existing weir_records whose payload column disagrees with payload_as
  // is a configuration to fix before starting, when the server answers now.
  std::string wrong;
  postgres_session look(pg.conninfo, password, std::min(timeout_ms, 2000), [&](postgres_session& s) {
    wrong = payload_column_disagrees(s.conn(), pg.payload_as);
    return true;
  });
  if (look.connected() && !wrong.empty()) throw std::runtime_error("sink.postgres.payload_as: " + wrong);
  return std::make_shared<postgres_factory>(pg.conninfo, password, timeout_ms, pg.payload_as);
}

}  // namespace weir
