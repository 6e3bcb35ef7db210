#include "sinks/mysql_session.hpp"

#include <errmsg.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

#include "sinks/mysql_errors.hpp"

namespace weir {

namespace {

/// Room left in a packet beside the statement itself.
constexpr std::size_t packet_margin = 1024;
/// A statement of several rows stops growing here, whatever
/// max_allowed_packet allows: a bigger one gains nothing and holds more
/// memory per slot. A single row may take the whole packet.
constexpr std::size_t statement_bytes_cap = 8 * 1024 * 1024;
constexpr std::size_t rows_per_statement = 1000;

/// The server's own errors, as opposed to libmariadb's (2000-2999 and
/// 5000-5999: no connection, lost connection, timeout).
bool server_error(unsigned number) {
  return number != 0 && !(number >= CR_MIN_ERROR && number <= CR_MAX_ERROR) && !(number >= 5000 && number <= 5999);
}

}  // namespace

void init_mysql_library() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (mysql_library_init(0, nullptr, nullptr) != 0) throw std::runtime_error("mysql: libmariadb failed to initialise");
  });
}

mysql_session::mysql_session(mysql_settings settings, std::shared_ptr<const reloadable_secret> password,
                             prepare_fn prepare)
    : settings_(std::move(settings)),
      password_(std::move(password)),
      prepare_(std::move(prepare)),
      packet_bytes_(statement_bytes_cap) {}

bool mysql_session::connected() {
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
  // byte for byte and never converts them. Values for a table of the
  // user's are UTF-8 text, and go as such.
  mysql_options(conn_, MYSQL_SET_CHARSET_NAME, settings_.charset.c_str());
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
      !run("SET SESSION innodb_lock_wait_timeout = " + lock_wait, number) || !read_packet_limit(number)) {
    error_ = "mysql: cannot prepare the session: " + describe(mysql_errno(conn_));
    disconnect();
    return false;
  }
  if (prepare_ && !prepare_(*this)) {
    disconnect();
    return false;
  }
  if (mysql_autocommit(conn_, 0) != 0) {
    error_ = "mysql: cannot prepare the session: " + describe(mysql_errno(conn_));
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

bool mysql_session::read_packet_limit(unsigned& number) {
  std::vector<std::vector<std::string>> rows;
  if (!query("SELECT @@max_allowed_packet", rows)) {
    number = mysql_errno(conn_);
    return false;
  }
  packet_bytes_ = rows.empty() ? 0 : std::strtoull(rows[0][0].c_str(), nullptr, 10);
  if (packet_bytes_ < 4 * packet_margin) packet_bytes_ = 4 * packet_margin;  // 1024 is the server's least
  return true;
}

void mysql_session::disconnect() {
  if (conn_) mysql_close(conn_);
  conn_ = nullptr;
}

bool mysql_session::run(const std::string& sql, unsigned& number) {
  if (mysql_real_query(conn_, sql.data(), sql.size()) == 0) return true;
  number = mysql_errno(conn_);
  error_ = describe(number);
  return false;
}

bool mysql_session::query(const std::string& sql, std::vector<std::vector<std::string>>& rows) {
  unsigned number = 0;
  if (!run(sql, number)) return false;
  MYSQL_RES* res = mysql_store_result(conn_);
  if (!res) {
    error_ = describe(mysql_errno(conn_));
    return false;
  }
  rows.clear();
  const unsigned columns = mysql_num_fields(res);
  while (MYSQL_ROW row = mysql_fetch_row(res)) {
    const unsigned long* lengths = mysql_fetch_lengths(res);
    auto& out = rows.emplace_back();
    for (unsigned c = 0; c < columns; ++c) out.emplace_back(row[c] ? std::string(row[c], lengths[c]) : std::string());
  }
  mysql_free_result(res);
  return true;
}

bool mysql_session::commit_transaction(unsigned& number) {
  if (mysql_commit(conn_) == 0) return true;
  number = mysql_errno(conn_);
  error_ = describe(number);
  return false;
}

void mysql_session::rollback() {
  if (conn_) mysql_rollback(conn_);
}

std::size_t mysql_session::escaped_size(const void* data, std::size_t size) {
  // mysql_real_escape_string puts a backslash before exactly these bytes.
  const auto* p = static_cast<const unsigned char*>(data);
  return size + static_cast<std::size_t>(std::count_if(p, p + size, [](unsigned char c) {
           return c == 0 || c == '\n' || c == '\r' || c == '\\' || c == '\'' || c == '"' || c == 0x1a;
         }));
}

void mysql_session::append_escaped(std::string& sql, const void* data, std::size_t size) const {
  const std::size_t at = sql.size();
  sql.resize(at + 2 * size + 1);
  const auto written = mysql_real_escape_string(conn_, sql.data() + at, static_cast<const char*>(data),
                                                static_cast<unsigned long>(size));
  sql.resize(at + written);
}

bool mysql_session::row_fits(std::size_t row_bytes, std::size_t statement_overhead) const {
  return row_bytes + statement_overhead + packet_margin <= packet_bytes_;
}

std::string mysql_session::too_big_reason(std::size_t payload_bytes) const {
  return "mysql: a payload of " + std::to_string(payload_bytes) +
         " bytes cannot fit one statement under the server's max_allowed_packet (" + std::to_string(packet_bytes_) +
         " bytes); raise it, then weir-ctl dl requeue";
}

bool mysql_session::insert(const statement& s, const std::vector<std::size_t>& rows, unsigned& number) {
  const std::size_t budget = std::min(statement_bytes_cap, packet_bytes_ - packet_margin);
  std::size_t next = 0;
  while (next < rows.size()) {
    sql_ = s.head;
    std::size_t in_statement = 0;
    while (next < rows.size() && in_statement < rows_per_statement) {
      if (in_statement > 0 && sql_.size() + s.row_bytes(rows[next]) + s.tail.size() > budget) break;
      if (in_statement > 0) sql_ += ',';
      s.append_row(sql_, rows[next]);
      ++in_statement;
      ++next;
    }
    sql_ += s.tail;
    if (!run(sql_, number)) return false;
  }
  return true;
}

commit_result mysql_session::commit_row_by_row(const statement& s, const std::vector<std::size_t>& rows,
                                               commit_result out) {
  for (const std::size_t i : rows) {
    unsigned number = 0;
    if (insert(s, {i}, number)) continue;
    if (classify_mysql_error(number) == mysql_error_class::transient) return lost(number);
    out.rejected.emplace_back(i, "mysql " + error_);
  }
  unsigned number = 0;
  if (!commit_transaction(number)) return lost(number);
  std::sort(out.rejected.begin(), out.rejected.end());
  return out;
}

commit_result mysql_session::commit(const statement& s, const std::vector<std::size_t>& rows,
                                    std::vector<std::pair<std::size_t, std::string>> refused) {
  commit_result out;
  out.rejected = std::move(refused);
  if (rows.empty()) return out;
  unsigned number = 0;
  if (insert(s, rows, number) && commit_transaction(number)) {
    std::sort(out.rejected.begin(), out.rejected.end());
    return out;
  }
  if (classify_mysql_error(number) == mysql_error_class::transient) return lost(number);
  rollback();
  return commit_row_by_row(s, rows, std::move(out));
}

commit_result mysql_session::lost(unsigned number) {
  auto r = commit_result::retry("mysql " + error_, server_error(number));
  disconnect();
  return r;
}

sink_health mysql_session::probe(std::string& why) {
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

std::string mysql_session::describe(unsigned number) const {
  return "error " + std::to_string(number) + " (" + mysql_sqlstate(conn_) + "): " + mysql_error(conn_);
}

}  // namespace weir
