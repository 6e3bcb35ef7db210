#pragma once
// One commit slot's PostgreSQL connection, for the postgres sinks: connects
// when it is not connected (with the password as of now, so a rotated one is
// used from the next connection on), runs statements, and sorts failures into
// the ones a retry can cure and the ones a row caused.
#include <libpq-fe.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sinks/secret.hpp"
#include "wire/sink_record.hpp"

namespace weir {

/// Whether a failure with this SQLSTATE is worth retrying rather than a
/// row's fault: connection loss (08, or no SQLSTATE at all), resources (53),
/// operator intervention (57), system (58), internal (XX), serialization and
/// deadlock (40001, 40P01), and 42 — a table or column that is not there or
/// may not be written: the table changed under the sink, which no row caused,
/// so nothing is dead-lettered for it.
bool pg_transient_state(const std::string& sqlstate);

/// The first line of a libpq message (they end with context lines).
std::string first_line(const std::string& s);

/// A PGresult that is cleared when it goes out of scope.
struct pg_result {
  PGresult* r;
  explicit pg_result(PGresult* p) : r(p) {}
  ~pg_result() { PQclear(r); }
  pg_result(const pg_result&) = delete;
  pg_result& operator=(const pg_result&) = delete;
  bool ok() const {
    const auto st = PQresultStatus(r);
    return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
  }
  std::string sqlstate() const {
    const char* s = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    return s ? s : "";
  }
};

class postgres_session {
 public:
  /// `prepare` runs on every new connection (making or checking the table);
  /// false, with error() set, drops the connection again.
  using prepare_fn = std::function<bool(postgres_session&)>;

  postgres_session(std::string conninfo, std::shared_ptr<const reloadable_secret> password, int timeout_ms,
                   prepare_fn prepare);
  ~postgres_session();
  postgres_session(const postgres_session&) = delete;
  postgres_session& operator=(const postgres_session&) = delete;

  /// True when connected, connecting (and preparing) first when not.
  bool connected();
  PGconn* conn() const { return conn_; }

  /// Runs `sql`; false with error() (and `state`, the SQLSTATE) on failure.
  bool exec(const std::string& sql, std::string* state = nullptr);
  /// Runs `sql` with text parameters (nullopt: NULL).
  bool exec_params(const std::string& sql, const std::vector<std::optional<std::string>>& params, std::string& state);
  /// Streams `data` through `copy_statement` (COPY ... FROM STDIN).
  bool copy_in(const char* copy_statement, const std::string& data, std::string& state);

  /// A row's fault somewhere in a batch: inserts each of `rows` (positions
  /// in the batch) with `insert_row` under its own savepoint, in one
  /// transaction; the rows PostgreSQL refuses join `out.rejected` with its
  /// SQLSTATE and message, the rest commit. A transient failure ends it.
  commit_result commit_row_by_row(const std::vector<std::size_t>& rows,
                                  const std::function<bool(std::size_t, std::string& state)>& insert_row,
                                  commit_result out);

  /// The retry answer for a failure with `state`: a lost or broken
  /// connection is dropped (the next commit connects again), else the open
  /// transaction is rolled back.
  commit_result lost(const std::string& state);
  sink_health probe(std::string& why);

  const std::string& error() const { return error_; }
  void set_error(std::string e) { error_ = std::move(e); }

 private:
  std::string conninfo_;
  std::shared_ptr<const reloadable_secret> password_;
  int timeout_ms_;
  prepare_fn prepare_;
  PGconn* conn_ = nullptr;
  std::string error_;
};

}  // namespace weir
