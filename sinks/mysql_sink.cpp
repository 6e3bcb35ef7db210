// mysql: MariaDB or MySQL through libmariadb. One transaction per batch into
// weir_records, the schema of the other SQL sinks, keyed by the record's
// coordinate and id (node, shard, segment sequence, index, id): the key's
// leading columns grow with every record, so InnoDB appends to its primary
// key instead of splitting random pages of it.
//
// A batch goes in as multi-row INSERTs (up to 1000 rows, and as many bytes
// as the server's max_allowed_packet allows, per statement) with
// ON DUPLICATE KEY UPDATE: a record delivered again after a crash or an
// ambiguous commit is a no-op on its key, and unlike INSERT IGNORE no other
// error is turned into a warning. ON DUPLICATE KEY fires on a clash with any
// unique key, though, and a key of the user's own must not swallow a
// different record: the update sets id to NULL unless the row found is this
// very record, which strict SQL mode refuses (error 1048), so that record
// is dead-lettered instead of dropped. Strict mode also makes a value the
// table cannot hold an error, never a silent change.
//
// Errors by number (sinks/mysql_errors.cpp): a refused value makes the sink
// insert the batch row by row in one transaction (in strict mode such an
// error fails only its statement); the rows refused are dead-lettered, the
// rest commit. Everything else (connection, deadlock, lock wait, read-only
// server, permissions, an error not known to be about data) is transient.
#include <mysql.h>

#include "sinks/mysql_session.hpp"
#include "sinks/mysql_table_sink.hpp"
#include "sinks/sink_types.hpp"
#include "wire/coordinate.hpp"

namespace weir {

namespace {

std::string create_table(payload_form payload_as) {
  return std::string(
             "CREATE TABLE IF NOT EXISTS weir_records(node INT UNSIGNED NOT NULL DEFAULT 0, shard INT UNSIGNED NOT NULL, "
             "seq BIGINT UNSIGNED NOT NULL, idx BIGINT UNSIGNED NOT NULL, id CHAR(64) CHARACTER SET ascii NOT NULL, "
             "segment VARCHAR(255) CHARACTER SET ascii NOT NULL, ts BIGINT, payload ") +
         (payload_as == payload_form::text ? "LONGTEXT CHARACTER SET utf8mb4" : "LONGBLOB") +
         ", PRIMARY KEY (node, shard, seq, idx, id)) ENGINE=InnoDB";
}
constexpr const char* payload_type =
    "SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND "
    "TABLE_NAME = 'weir_records' AND COLUMN_NAME = 'payload'";

/// Makes weir_records when missing and checks its payload column against payload_as.
bool prepare_weir_records(mysql_session& s, payload_form payload_as) {
  unsigned number = 0;
  std::vector<std::vector<std::string>> type;
  if (!s.run(create_table(payload_as), number) || !s.query(payload_type, type)) {
    s.set_error("mysql: cannot prepare weir_records: " + s.error());
    return false;
  }
  const bool text = payload_as == payload_form::text;
  const std::string have = type.empty() ? "" : type[0][0];
  if (have.empty() || (have.find("text") != std::string::npos) == text) return true;
  s.set_error("mysql: weir_records.payload is " + have + ", but sink.mysql.payload_as is " +
              (text ? "text" : "bytes") +
              ": set payload_as to match the table, or change the column's type (ALTER TABLE weir_records MODIFY "
              "payload ...)");
  return false;
}

constexpr const char* insert_head = "INSERT INTO weir_records(node, shard, seq, idx, id, segment, ts, payload) VALUES ";
constexpr const char* insert_tail =
    " ON DUPLICATE KEY UPDATE id = IF(node <=> VALUES(node) AND shard <=> VALUES(shard) AND seq <=> VALUES(seq) "
    "AND idx <=> VALUES(idx) AND id <=> VALUES(id), id, NULL)";
/// Beside its escaped strings, a row's text (numbers, quotes, commas) never
/// takes more than this.
constexpr std::size_t row_fixed_bytes = 128;

class mysql_sink final : public sink {
 public:
  mysql_sink(const mysql_settings& settings, std::shared_ptr<const reloadable_secret> password,
             payload_form payload_as)
      : session_(settings, std::move(password),
                 [payload_as](mysql_session& s) { return prepare_weir_records(s, payload_as); }),
        payload_as_(payload_as) {}

  commit_result commit(const std::vector<sink_record>& batch) override {
    if (!session_.connected()) return commit_result::retry(session_.error());
    std::vector<std::pair<std::size_t, std::string>> refused;
    std::vector<std::size_t> rows;
    rows.reserve(batch.size());
    const std::size_t overhead = std::char_traits<char>::length(insert_head) + std::char_traits<char>::length(insert_tail);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const auto& p = batch[i].payload;
      if (payload_as_ == payload_form::text &&
          !wire::is_valid_utf8({reinterpret_cast<const char*>(p.data()), p.size()}))
        refused.emplace_back(i, "the payload is not UTF-8 text (sink.mysql.payload_as is text)");
      else if (session_.row_fits(row_bytes(batch[i]), overhead)) rows.push_back(i);
      else refused.emplace_back(i, session_.too_big_reason(p.size()));
    }
    const mysql_session::statement st{insert_head, insert_tail,
                                      [&](std::size_t i) { return row_bytes(batch[i]); },
                                      [&](std::string& sql, std::size_t i) { append_row(sql, batch[i]); }};
    return session_.commit(st, rows, std::move(refused));
  }

  sink_health probe(std::string& why) override { return session_.probe(why); }

 private:
  /// A row's exact share of a statement, give or take row_fixed_bytes.
  static std::size_t row_bytes(const sink_record& r) {
    return mysql_session::escaped_size(r.payload.data(), r.payload.size()) +
           mysql_session::escaped_size(r.id.data(), r.id.size()) +
           mysql_session::escaped_size(r.segment.data(), r.segment.size()) + row_fixed_bytes;
  }

  void append_row(std::string& sql, const sink_record& r) const {
    sql += '(';
    sql += std::to_string(r.node);
    sql += ',';
    sql += std::to_string(r.shard);
    sql += ',';
    sql += std::to_string(r.sequence);
    sql += ',';
    sql += std::to_string(r.index);
    sql += ",'";
    session_.append_escaped(sql, r.id.data(), r.id.size());
    sql += "','";
    session_.append_escaped(sql, r.segment.data(), r.segment.size());
    sql += "',";
    sql += std::to_string(r.ts_ns);
    sql += ",'";
    session_.append_escaped(sql, r.payload.data(), r.payload.size());
    sql += "')";
  }

  mysql_session session_;
  payload_form payload_as_;
};

class mysql_factory final : public sink_factory {
 public:
  mysql_factory(mysql_settings settings, std::shared_ptr<reloadable_secret> password, payload_form payload_as)
      : settings_(std::move(settings)), password_(std::move(password)), payload_as_(payload_as) {
    init_mysql_library();
  }
  std::unique_ptr<sink> make() override { return std::make_unique<mysql_sink>(settings_, password_, payload_as_); }
  std::string type() const override { return "mysql"; }
  // Open connections keep the session they authenticated; new ones use the new password.
  secret_reload reload_secrets() override { return reload_each({password_.get()}); }

 private:
  mysql_settings settings_;
  std::shared_ptr<reloadable_secret> password_;
  payload_form payload_as_;
};

}  // namespace

std::shared_ptr<sink_factory> make_mysql_sink_factory(const config& cfg) {
  const auto& m = cfg.sink.mysql;
  mysql_settings settings{m.host, m.socket, m.user, m.database, static_cast<unsigned>(m.port),
                          static_cast<int>(cfg.sink.timeout_ms)};
  auto password =
      std::make_shared<reloadable_secret>("sink.mysql.password_file", m.password_file, "WEIR_SINK_MYSQL_PASSWORD");
  if (!m.writes_weir_records()) return make_mysql_table_sink_factory(m, std::move(settings), std::move(password));
  if (m.payload_as == payload_form::text) settings.charset = "utf8mb4";  // checked UTF-8, stored as such
  return std::make_shared<mysql_factory>(std::move(settings), std::move(password), m.payload_as);
}

}  // namespace weir
