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
#include <errmsg.h>
#include <mysql.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

#include "sinks/mysql_errors.hpp"
#include "sinks/secret.hpp"
#include "sinks/sink_types.hpp"

namespace weir {

namespace {

constexpr const char* create_table =
    "CREATE TABLE IF NOT EXISTS weir_records(node INT UNSIGNED NOT NULL DEFAULT 0, shard INT UNSIGNED NOT NULL, "
    "seq BIGINT UNSIGNED NOT NULL, idx BIGINT UNSIGNED NOT NULL, id CHAR(64) CHARACTER SET ascii NOT NULL, "
    "segment VARCHAR(255) CHARACTER SET ascii NOT NULL, ts BIGINT, payload LONGBLOB, "
    "PRIMARY KEY (node, shard, seq, idx, id)) ENGINE=InnoDB";
constexpr const char* insert_head = "INSERT INTO weir_records(node, shard, seq, idx, id, segment, ts, payload) VALUES ";
constexpr const char* insert_tail =
    " ON DUPLICATE KEY UPDATE id = IF(node <=> VALUES(node) AND shard <=> VALUES(shard) AND seq <=> VALUES(seq) "
    "AND idx <=> VALUES(idx) AND id <=> VALUES(id), id, NULL)";
constexpr std::size_t rows_per_statement = 1000;
/// Room left in a packet beside the statement itself.
constexpr std::size_t packet_margin = 1024;
/// A statement of several rows stops growing here, whatever
/// max_allowed_packet allows: a bigger one gains nothing and holds more
/// memory per slot. A single row may take the whole packet.
constexpr std::size_t statement_bytes_cap = 8 * 1024 * 1024;
/// Beside its escaped strings, a row's text (numbers, quotes, commas) never
/// takes more than this.
constexpr std::size_t row_fixed_bytes = 128;

struct connection_settings {
  std::string host, socket, user, database;
  unsigned port = 3306;
  int timeout_ms = 10000;
};

class mysql_sink final : public sink {
 public:
  mysql_sink(const connection_settings& settings, std::shared_ptr<const reloadable_secret> password)
      : settings_(settings), password_(std::move(password)) {}
  ~mysql_sink() override { disconnect(); }

  commit_result commit(const std::vector<sink_record>& batch) override {
    if (!connected()) return commit_result::retry(error_);
    std::vector<std::pair<std::size_t, std::string>> too_big;
    std::vector<std::size_t> rows;
    rows.reserve(batch.size());
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (row_fits(batch[i])) rows.push_back(i);
      else too_big.emplace_back(i, too_big_reason(batch[i]));
    }
    unsigned number = 0;
    if (insert(batch, rows, number) && commit_transaction(number)) {
      commit_result out;
      out.rejected = std::move(too_big);
      return out;
    }
    if (classify_mysql_error(number) == mysql_error_class::transient) return lost(number);
    rollback();
    return commit_row_by_row(batch, rows, std::move(too_big));
  }

  sink_health probe(std::string& why) override {
    // COM_PING: a round trip to the server that opens no transaction.
    if (connected() && mysql_ping(conn_) != 0) {
      error_ = describe(mysql_errno(conn_));
      disconnect();
    }
    if (!conn_) {
      why = error_;
      return sink_health::down;
    }
    return sink_health::healthy;
  }

 private:
  bool connected() {
    if (conn_) return true;
    conn_ = mysql_init(nullptr);
    if (!conn_) {
      error_ = "mysql: out of memory for a connection";
      return false;
    }
    // libmariadb takes whole seconds; each read and write of a statement is bounded by it.
    const unsigned timeout_s = static_cast<unsigned>(std::max(1, settings_.timeout_ms / 1000));
    mysql_options(conn_, MYSQL_OPT_CONNECT_TIMEOUT, &timeout_s);
    mysql_options(conn_, MYSQL_OPT_READ_TIMEOUT, &timeout_s);
    mysql_options(conn_, MYSQL_OPT_WRITE_TIMEOUT, &timeout_s);
    // Payloads are bytes: a binary connection character set escapes them
    // byte for byte and never converts them.
    mysql_options(conn_, MYSQL_SET_CHARSET_NAME, "binary");
    const unsigned no_local_infile = 0;
    mysql_options(conn_, MYSQL_OPT_LOCAL_INFILE, &no_local_infile);
    // A silent reconnect would lose the session's autocommit and SQL mode.
    const my_bool no_reconnect = 0;
    mysql_options(conn_, MYSQL_OPT_RECONNECT, &no_reconnect);
    mysql_optionsv(conn_, MYSQL_OPT_CONNECT_ATTR_ADD, "program_name", "weir");
    const std::string password = password_->value();  // as of now: a reload may have rotated it
    const bool by_socket = !settings_.socket.empty();
    if (!mysql_real_connect(conn_, by_socket ? nullptr : settings_.host.c_str(), settings_.user.c_str(),
                            password.empty() ? nullptr : password.c_str(), settings_.database.c_str(),
                            by_socket ? 0 : settings_.port, by_socket ? settings_.socket.c_str() : nullptr, 0)) {
      error_ = "mysql connection failed: " + describe(mysql_errno(conn_));
      disconnect();
      return false;
    }
    unsigned number = 0;
    // A lock wait gives up before the client's read timeout does: an
    // abandoned statement would go on holding its batch's locks, and the
    // retry would wait on them.
    const std::string lock_wait = std::to_string(std::max(1u, timeout_s - 1));
    if (!run("SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'", number) ||
        !run("SET SESSION innodb_lock_wait_timeout = " + lock_wait, number) || !run(create_table, number) ||
        !read_packet_limit(number) || mysql_autocommit(conn_, 0) != 0) {
      error_ = "mysql: cannot prepare the session and weir_records: " + describe(mysql_errno(conn_));
      disconnect();
      return false;
    }
    // MariaDB bounds a statement on the server too, just under the client's
    // read timeout; MySQL has no such setting for an INSERT.
    char statement_time[32];
    std::snprintf(statement_time, sizeof statement_time, "%.3f", 0.9 * timeout_s);
    run(std::string("SET SESSION max_statement_time = ") + statement_time, number);
    return true;
  }

  bool read_packet_limit(unsigned& number) {
    if (!run("SELECT @@max_allowed_packet", number)) return false;
    MYSQL_RES* res = mysql_store_result(conn_);
    if (!res) return false;
    MYSQL_ROW row = mysql_fetch_row(res);
    packet_bytes_ = row && row[0] ? std::strtoull(row[0], nullptr, 10) : 0;
    mysql_free_result(res);
    if (packet_bytes_ < 4 * packet_margin) packet_bytes_ = 4 * packet_margin;  // 1024 is the server's least
    return true;
  }

  void disconnect() {
    if (conn_) mysql_close(conn_);
    conn_ = nullptr;
  }

  bool run(const std::string& sql, unsigned& number) {
    if (mysql_real_query(conn_, sql.data(), sql.size()) == 0) return true;
    number = mysql_errno(conn_);
    error_ = describe(number);
    return false;
  }

  bool commit_transaction(unsigned& number) {
    if (mysql_commit(conn_) == 0) return true;
    number = mysql_errno(conn_);
    error_ = describe(number);
    return false;
  }

  void rollback() {
    if (conn_) mysql_rollback(conn_);
  }

  /// How long `data` is once escaped: with the binary character set,
  /// mysql_real_escape_string puts a backslash before exactly these bytes.
  static std::size_t escaped_size(const void* data, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    return size + static_cast<std::size_t>(std::count_if(p, p + size, [](unsigned char c) {
             return c == 0 || c == '\n' || c == '\r' || c == '\\' || c == '\'' || c == '"' || c == 0x1a;
           }));
  }
  /// A row's exact share of a statement, give or take row_fixed_bytes.
  static std::size_t row_bytes(const sink_record& r) {
    return escaped_size(r.payload.data(), r.payload.size()) + escaped_size(r.id.data(), r.id.size()) +
           escaped_size(r.segment.data(), r.segment.size()) + row_fixed_bytes;
  }
  static std::size_t statement_overhead() {
    return std::char_traits<char>::length(insert_head) + std::char_traits<char>::length(insert_tail);
  }
  bool row_fits(const sink_record& r) const {
    return row_bytes(r) + statement_overhead() + packet_margin <= packet_bytes_;
  }
  std::string too_big_reason(const sink_record& r) const {
    return "mysql: a payload of " + std::to_string(r.payload.size()) +
           " bytes cannot fit one statement under the server's max_allowed_packet (" + std::to_string(packet_bytes_) +
           " bytes); raise it, then weir-ctl dl requeue";
  }

  void append_escaped(const void* data, std::size_t size) {
    const std::size_t at = sql_.size();
    sql_.resize(at + 2 * size + 1);
    const auto written = mysql_real_escape_string(conn_, sql_.data() + at, static_cast<const char*>(data),
                                                  static_cast<unsigned long>(size));
    sql_.resize(at + written);
  }

  void append_row(const sink_record& r) {
    sql_ += '(';
    sql_ += std::to_string(r.node);
    sql_ += ',';
    sql_ += std::to_string(r.shard);
    sql_ += ',';
    sql_ += std::to_string(r.sequence);
    sql_ += ',';
    sql_ += std::to_string(r.index);
    sql_ += ",'";
    append_escaped(r.id.data(), r.id.size());
    sql_ += "','";
    append_escaped(r.segment.data(), r.segment.size());
    sql_ += "',";
    sql_ += std::to_string(r.ts_ns);
    sql_ += ",'";
    append_escaped(r.payload.data(), r.payload.size());
    sql_ += "')";
  }

  /// INSERTs `rows` (positions into batch) within the open transaction, as
  /// few statements as the row and byte limits allow.
  bool insert(const std::vector<sink_record>& batch, const std::vector<std::size_t>& rows, unsigned& number) {
    std::size_t next = 0;
    while (next < rows.size()) {
      sql_ = insert_head;
      std::size_t in_statement = 0;
      while (next < rows.size() && in_statement < rows_per_statement) {
        const auto& r = batch[rows[next]];
        const std::size_t budget = std::min(statement_bytes_cap, packet_bytes_ - packet_margin);
        if (in_statement > 0 && sql_.size() + row_bytes(r) + std::char_traits<char>::length(insert_tail) > budget)
          break;
        if (in_statement > 0) sql_ += ',';
        append_row(r);
        ++in_statement;
        ++next;
      }
      sql_ += insert_tail;
      if (!run(sql_, number)) return false;
    }
    return true;
  }

  /// A row's data was refused somewhere in the batch: each row alone, in one
  /// transaction, to find which.
  commit_result commit_row_by_row(const std::vector<sink_record>& batch, const std::vector<std::size_t>& rows,
                                  std::vector<std::pair<std::size_t, std::string>> rejected) {
    commit_result out;
    out.rejected = std::move(rejected);
    for (const std::size_t i : rows) {
      unsigned number = 0;
      if (insert(batch, {i}, number)) continue;
      if (classify_mysql_error(number) == mysql_error_class::transient) return lost(number);
      out.rejected.emplace_back(i, "mysql " + error_);
    }
    unsigned number = 0;
    if (!commit_transaction(number)) return lost(number);
    return out;
  }

  /// A transient failure: the transaction is gone, and so is the
  /// connection (some server errors end the session too; the next attempt
  /// starts from a fresh one either way).
  commit_result lost(unsigned number) {
    auto r = commit_result::retry("mysql " + error_, server_error(number));
    disconnect();
    return r;
  }

  /// The server's own errors, as opposed to libmariadb's (2000-2999 and
  /// 5000-5999: no connection, lost connection, timeout).
  static bool server_error(unsigned number) {
    return number != 0 && !(number >= CR_MIN_ERROR && number <= CR_MAX_ERROR) && !(number >= 5000 && number <= 5999);
  }

  std::string describe(unsigned number) const {
    return "error " + std::to_string(number) + " (" + mysql_sqlstate(conn_) + "): " + mysql_error(conn_);
  }

  connection_settings settings_;
  std::shared_ptr<const reloadable_secret> password_;
  MYSQL* conn_ = nullptr;
  std::size_t packet_bytes_ = statement_bytes_cap;  // the server's max_allowed_packet
  std::string error_;
  std::string sql_;  // kept between batches: one allocation for the slot's life
};

class mysql_factory final : public sink_factory {
 public:
  mysql_factory(connection_settings settings, std::shared_ptr<reloadable_secret> password)
      : settings_(std::move(settings)), password_(std::move(password)) {
    // Not thread-safe, and otherwise run by the first mysql_init of whichever slot comes first.
    static std::once_flag once;
    std::call_once(once, [] {
      if (mysql_library_init(0, nullptr, nullptr) != 0) throw std::runtime_error("mysql: libmariadb failed to initialise");
    });
  }
  std::unique_ptr<sink> make() override { return std::make_unique<mysql_sink>(settings_, password_); }
  std::string type() const override { return "mysql"; }
  // Open connections keep the session they authenticated; new ones use the new password.
  secret_reload reload_secrets() override { return reload_each({password_.get()}); }

 private:
  connection_settings settings_;
  std::shared_ptr<reloadable_secret> password_;
};

}  // namespace

std::shared_ptr<sink_factory> make_mysql_sink_factory(const config& cfg) {
  const auto& m = cfg.sink.mysql;
  connection_settings settings{m.host, m.socket, m.user, m.database, static_cast<unsigned>(m.port),
                               static_cast<int>(cfg.sink.timeout_ms)};
  return std::make_shared<mysql_factory>(
      std::move(settings),
      std::make_shared<reloadable_secret>("sink.mysql.password_file", m.password_file, "WEIR_SINK_MYSQL_PASSWORD"));
}

}  // namespace weir
