#pragma once
// One commit slot's MariaDB/MySQL connection, for the mysql sinks: connects
// when it is not connected (strict SQL mode, bounded lock waits and
// statements, the password as of now), inserts rows as few multi-row
// statements as the server's max_allowed_packet allows, and finds the rows
// a server refuses one at a time. After any failure the connection is
// dropped: the next attempt starts from a fresh session.
#include <mysql.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sinks/secret.hpp"
#include "wire/sink_record.hpp"

namespace weir {

struct mysql_settings {
  std::string host, socket, user, database;
  unsigned port = 3306;
  int timeout_ms = 10000;
  /// "binary" for payloads sent byte for byte; "utf8mb4" for text values.
  std::string charset = "binary";
};

class mysql_session {
 public:
  /// `prepare` runs on every new connection (making or checking the table)
  /// before the transaction mode is set; false, with error() set, drops it.
  using prepare_fn = std::function<bool(mysql_session&)>;

  mysql_session(mysql_settings settings, std::shared_ptr<const reloadable_secret> password, prepare_fn prepare);
  ~mysql_session() { disconnect(); }
  mysql_session(const mysql_session&) = delete;
  mysql_session& operator=(const mysql_session&) = delete;

  bool connected();
  MYSQL* conn() const { return conn_; }
  const std::string& error() const { return error_; }
  void set_error(std::string e) { error_ = std::move(e); }
  std::size_t packet_bytes() const { return packet_bytes_; }

  /// Runs `sql`; false with error() and `number` on failure.
  bool run(const std::string& sql, unsigned& number);
  /// The rows of a query, each value as text ("" for NULL); false on failure.
  bool query(const std::string& sql, std::vector<std::vector<std::string>>& rows);
  bool commit_transaction(unsigned& number);
  void rollback();

  /// Appends `data` escaped for a quoted literal in the session's charset.
  void append_escaped(std::string& sql, const void* data, std::size_t size) const;
  /// How long `data` is once escaped (an upper bound under utf8mb4).
  static std::size_t escaped_size(const void* data, std::size_t size);
  /// Whether a row of this many bytes fits one statement.
  bool row_fits(std::size_t row_bytes, std::size_t statement_overhead) const;
  /// Why a row does not: what to raise, for the dead letter.
  std::string too_big_reason(std::size_t payload_bytes) const;

  /// A multi-row INSERT: `head` (… VALUES ), then rows, then `tail`.
  struct statement {
    std::string head, tail;
    std::function<std::size_t(std::size_t)> row_bytes;          // a row's share, give or take 128 bytes
    std::function<void(std::string&, std::size_t)> append_row;  // "(…)" of a row
  };
  /// INSERTs `rows` within the open transaction, as few statements as the
  /// row and byte limits allow.
  bool insert(const statement& s, const std::vector<std::size_t>& rows, unsigned& number);
  /// A row's data was refused somewhere in the batch: each row alone, in
  /// one transaction, to find which; refused rows join `out.rejected`.
  commit_result commit_row_by_row(const statement& s, const std::vector<std::size_t>& rows, commit_result out);
  /// The whole of a commit: `rows` in bulk, else row by row after a data
  /// error, else a retry; `refused` (rows never sent) join the answer.
  commit_result commit(const statement& s, const std::vector<std::size_t>& rows,
                       std::vector<std::pair<std::size_t, std::string>> refused);

  /// A transient failure: the transaction is gone, and so is the connection.
  commit_result lost(unsigned number);
  sink_health probe(std::string& why);

 private:
  bool read_packet_limit(unsigned& number);
  void disconnect();
  std::string describe(unsigned number) const;

  mysql_settings settings_;
  std::shared_ptr<const reloadable_secret> password_;
  prepare_fn prepare_;
  MYSQL* conn_ = nullptr;
  std::size_t packet_bytes_;  // the server's max_allowed_packet
  std::string error_;
  std::string sql_;  // kept between batches: one allocation for the slot's life
};

/// Runs mysql_library_init once (it is not thread-safe, and would otherwise
/// run in whichever slot's first mysql_init came first).
void init_mysql_library();

}  // namespace weir
