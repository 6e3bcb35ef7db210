#include "sinks/postgres_session.hpp"

#include <algorithm>

namespace weir {

bool pg_transient_state(const std::string& s) {
  if (s.empty()) return true;  // no SQLSTATE: the connection itself failed
  const std::string cls = s.substr(0, 2);
  return cls == "08" || cls == "42" || cls == "53" || cls == "57" || cls == "58" || s == "40001" || s == "40P01" ||
         cls == "XX";
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

postgres_session::postgres_session(std::string conninfo, std::shared_ptr<const reloadable_secret> password,
                                   int timeout_ms, prepare_fn prepare)
    : conninfo_(std::move(conninfo)),
      password_(std::move(password)),
      timeout_ms_(timeout_ms),
      prepare_(std::move(prepare)) {}

postgres_session::~postgres_session() {
  if (conn_) PQfinish(conn_);
}

bool postgres_session::connected() {
  if (conn_ && PQstatus(conn_) == CONNECTION_OK) return true;
  if (conn_) PQfinish(conn_);
  const std::string timeout = std::to_string(std::max(1, timeout_ms_ / 1000));
  const std::string password = password_->value();  // as of now: a reload may have rotated it
  // Values are UTF-8 (a payload's JSON): the server converts them to the
  // database's encoding, and refuses what that encoding cannot hold.
  const char* keys[] = {"dbname", "password", "connect_timeout", "application_name", "client_encoding", nullptr};
  const char* values[] = {conninfo_.c_str(), password.empty() ? nullptr : password.c_str(), timeout.c_str(), "weir",
                          "UTF8", nullptr};
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
  if (prepare_ && !prepare_(*this)) {
    PQfinish(conn_);
    conn_ = nullptr;
    return false;
  }
  return true;
}

bool postgres_session::exec(const std::string& sql, std::string* state) {
  pg_result r(PQexec(conn_, sql.c_str()));
  if (!r.ok()) {
    error_ = PQresultErrorMessage(r.r);
    if (state) *state = r.sqlstate();
    return false;
  }
  return true;
}

bool postgres_session::exec_params(const std::string& sql, const std::vector<std::optional<std::string>>& params,
                                   std::string& state) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  pg_result r(PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                           nullptr, 0));
  if (!r.ok()) {
    error_ = PQresultErrorMessage(r.r);
    state = r.sqlstate();
    return false;
  }
  return true;
}

bool postgres_session::copy_in(const char* copy_statement, const std::string& data, std::string& state) {
  pg_result started(PQexec(conn_, copy_statement));
  if (PQresultStatus(started.r) != PGRES_COPY_IN) {
    error_ = PQresultErrorMessage(started.r);
    state = started.sqlstate();
    return false;
  }
  if (PQputCopyData(conn_, data.data(), static_cast<int>(data.size())) != 1 || PQputCopyEnd(conn_, nullptr) != 1) {
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

commit_result postgres_session::commit_row_by_row(const std::vector<std::size_t>& rows,
                                                  const std::function<bool(std::size_t, std::string&)>& insert_row,
                                                  commit_result out) {
  std::string state;
  // A deferred constraint (a foreign key DEFERRABLE INITIALLY DEFERRED)
  // would fail only at COMMIT, naming no row: checked at each row instead.
  if (!exec("BEGIN", &state) || !exec("SET CONSTRAINTS ALL IMMEDIATE", &state)) return lost(state);
  for (std::size_t i : rows) {
    if (!exec("SAVEPOINT row", &state)) return lost(state);
    if (insert_row(i, state)) {
      if (!exec("RELEASE SAVEPOINT row", &state)) return lost(state);
      continue;
    }
    if (pg_transient_state(state)) return lost(state);
    out.rejected.emplace_back(i, "postgres SQLSTATE " + state + ": " + first_line(error_));
    if (!exec("ROLLBACK TO SAVEPOINT row", &state)) return lost(state);
  }
  if (!exec("COMMIT", &state)) return lost(state);
  std::sort(out.rejected.begin(), out.rejected.end());
  return out;
}

commit_result postgres_session::lost(const std::string& state) {
  auto r = commit_result::retry("postgres" + (state.empty() ? std::string() : " SQLSTATE " + state) + ": " +
                                    first_line(error_.empty() ? PQerrorMessage(conn_) : error_),
                                !state.empty() && PQstatus(conn_) == CONNECTION_OK);
  if (PQstatus(conn_) != CONNECTION_OK || pg_transient_state(state)) {
    PQfinish(conn_);
    conn_ = nullptr;
  } else {
    exec("ROLLBACK");
  }
  return r;
}

sink_health postgres_session::probe(std::string& why) {
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

}  // namespace weir
