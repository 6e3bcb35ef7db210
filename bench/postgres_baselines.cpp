#include "bench/postgres_baselines.hpp"

#include <libpq-fe.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bench/load_driver.hpp"

namespace weir::bench {

namespace {

using clock = std::chrono::steady_clock;

struct connection {
  explicit connection(const std::string& conninfo) : conn(PQconnectdb(conninfo.c_str())) {
    if (PQstatus(conn) != CONNECTION_OK)
      throw std::runtime_error(std::string("postgres baseline: cannot connect: ") + PQerrorMessage(conn));
    // "table ... does not exist, skipping" and the like: not progress worth printing.
    PQsetNoticeProcessor(conn, [](void*, const char*) {}, nullptr);
  }
  ~connection() { PQfinish(conn); }
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  /// Runs `sql`; throws with the server's message when it fails.
  void exec(const std::string& sql) {
    std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(conn, sql.c_str()), PQclear);
    const auto status = PQresultStatus(r.get());
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
      throw std::runtime_error("postgres baseline: " + sql + ": " + PQerrorMessage(conn));
  }

  PGconn* conn;
};

std::string payload_hex(std::size_t payload_bytes) {
  std::string hex = "\\\\x";  // COPY text format: a backslash is written twice
  for (std::size_t i = 0; i < payload_bytes; ++i) hex += "70";  // 'p'
  return hex;
}

}  // namespace

baseline_result measure_postgres_insert(const std::string& conninfo, int clients, std::size_t payload_bytes,
                                        double seconds) {
  {
    connection setup(conninfo);
    setup.exec("DROP TABLE IF EXISTS weir_bench_insert");
    setup.exec("CREATE TABLE weir_bench_insert(id TEXT PRIMARY KEY, ts BIGINT, payload BYTEA)");
  }
  const std::string payload(payload_bytes, 'p');
  std::atomic<std::uint64_t> rows{0};
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(clients));
  std::vector<std::string> errors(static_cast<std::size_t>(clients));
  const auto deadline = clock::now() + std::chrono::duration<double>(seconds);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&, c] {
      try {
        connection db(conninfo);
        const char* values[3];
        const int lengths[3] = {0, 0, static_cast<int>(payload.size())};
        const int formats[3] = {0, 0, 1};
        for (std::uint64_t n = 0; clock::now() < deadline; ++n) {
          // Ids spread over the key the way record ids (hashes) do.
          char id[40], ts[24];
          std::snprintf(id, sizeof id, "%016llx-%02d", static_cast<unsigned long long>((n + 1) * 0x9E3779B97F4A7C15ull), c);
          std::snprintf(ts, sizeof ts, "%llu", static_cast<unsigned long long>(n));
          values[0] = id;
          values[1] = ts;
          values[2] = payload.data();
          const auto t0 = clock::now();
          std::unique_ptr<PGresult, decltype(&PQclear)> r(
              PQexecParams(db.conn, "INSERT INTO weir_bench_insert(id, ts, payload) VALUES($1, $2, $3)", 3, nullptr,
                           values, lengths, formats, 0),
              PQclear);
          if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) throw std::runtime_error(PQerrorMessage(db.conn));
          latencies[static_cast<std::size_t>(c)].push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
          rows.fetch_add(1, std::memory_order_relaxed);
        }
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(c)] = e.what();
      }
    });
  const auto started = clock::now();
  for (auto& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(clock::now() - started).count();
  for (const auto& e : errors)
    if (!e.empty()) throw std::runtime_error("postgres insert baseline: " + e);
  connection(conninfo).exec("DROP TABLE weir_bench_insert");
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  return {static_cast<double>(rows.load()) / elapsed, quantile(all, 0.5)};
}

namespace {

/// COPY into a fresh `table` (made by `create`, dropped after) of 10,000
/// rows at a time for `seconds`, one connection; `row(n, chunk)` appends
/// the n-th row's text. Rows per second, and the median COPY's time.
template <class Row>
baseline_result measure_copy(const std::string& conninfo, const std::string& table, const std::string& create,
                             const std::string& statement, double seconds, Row row) {
  constexpr int rows_per_copy = 10'000;
  connection db(conninfo);
  db.exec("DROP TABLE IF EXISTS " + table);
  db.exec(create);
  std::vector<double> lat;
  std::uint64_t rows = 0;
  std::string chunk;
  const auto start = clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  while (clock::now() < deadline) {
    chunk.clear();
    for (int i = 0; i < rows_per_copy; ++i, ++rows) row(rows, chunk);
    const auto t0 = clock::now();
    std::unique_ptr<PGresult, decltype(&PQclear)> started(PQexec(db.conn, statement.c_str()), PQclear);
    if (PQresultStatus(started.get()) != PGRES_COPY_IN)
      throw std::runtime_error(std::string("postgres copy baseline: ") + PQerrorMessage(db.conn));
    if (PQputCopyData(db.conn, chunk.data(), static_cast<int>(chunk.size())) != 1 || PQputCopyEnd(db.conn, nullptr) != 1)
      throw std::runtime_error(std::string("postgres copy baseline: ") + PQerrorMessage(db.conn));
    std::unique_ptr<PGresult, decltype(&PQclear)> r(PQgetResult(db.conn), PQclear);
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK)
      throw std::runtime_error(std::string("postgres copy baseline: ") + PQerrorMessage(db.conn));
    while (PGresult* more = PQgetResult(db.conn)) PQclear(more);
    lat.push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
  }
  const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
  db.exec("DROP TABLE " + table);
  return {static_cast<double>(rows) / elapsed, quantile(lat, 0.5)};
}

}  // namespace

baseline_result measure_postgres_copy(const std::string& conninfo, std::size_t payload_bytes, double seconds) {
  const std::string hex = payload_hex(payload_bytes);
  return measure_copy(conninfo, "weir_bench_copy",
                      "CREATE TABLE weir_bench_copy(seq BIGINT PRIMARY KEY, id TEXT, ts BIGINT, payload BYTEA)",
                      "COPY weir_bench_copy(seq, id, ts, payload) FROM STDIN", seconds,
                      [&](std::uint64_t n, std::string& chunk) {
                        char line[96];
                        std::snprintf(line, sizeof line, "%llu\t%016llx\t%llu\t", static_cast<unsigned long long>(n),
                                      static_cast<unsigned long long>((n + 1) * 0x9E3779B97F4A7C15ull),
                                      static_cast<unsigned long long>(n));
                        chunk += line;
                        chunk += hex;
                        chunk += '\n';
                      });
}

baseline_result measure_postgres_bulk(const std::string& conninfo, std::size_t payload_bytes, double seconds) {
  constexpr int rows_per_transaction = 1000;
  connection db(conninfo);
  db.exec("DROP TABLE IF EXISTS weir_bench_bulk");
  db.exec("CREATE TABLE weir_bench_bulk(id TEXT PRIMARY KEY, ts BIGINT, payload BYTEA)");
  std::unique_ptr<PGresult, decltype(&PQclear)> prepared(
      PQprepare(db.conn, "bulk_row", "INSERT INTO weir_bench_bulk(id, ts, payload) VALUES($1, $2, $3)", 3, nullptr),
      PQclear);
  if (PQresultStatus(prepared.get()) != PGRES_COMMAND_OK)
    throw std::runtime_error(std::string("postgres bulk baseline: ") + PQerrorMessage(db.conn));
  const std::string payload(payload_bytes, 'p');
  std::vector<double> lat;
  std::uint64_t rows = 0;
  const auto start = clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  while (clock::now() < deadline) {
    const auto t0 = clock::now();
    db.exec("BEGIN");
    for (int i = 0; i < rows_per_transaction; ++i, ++rows) {
      char id[40], ts[24];
      std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>((rows + 1) * 0x9E3779B97F4A7C15ull));
      std::snprintf(ts, sizeof ts, "%llu", static_cast<unsigned long long>(rows));
      const char* values[3] = {id, ts, payload.data()};
      const int lengths[3] = {0, 0, static_cast<int>(payload.size())};
      const int formats[3] = {0, 0, 1};
      std::unique_ptr<PGresult, decltype(&PQclear)> r(
          PQexecPrepared(db.conn, "bulk_row", 3, values, lengths, formats, 0), PQclear);
      if (PQresultStatus(r.get()) != PGRES_COMMAND_OK)
        throw std::runtime_error(std::string("postgres bulk baseline: ") + PQerrorMessage(db.conn));
    }
    db.exec("COMMIT");
    lat.push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
  }
  const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
  db.exec("DROP TABLE weir_bench_bulk");
  return {static_cast<double>(rows) / elapsed, quantile(lat, 0.5)};
}

double postgres_commits(const std::string& conninfo) {
  connection db(conninfo);
  // Another backend's counts reach the shared stats when it goes idle (at
  // most a second later); a fresh snapshot sees what has been flushed.
  db.exec("SELECT pg_stat_clear_snapshot()");
  std::unique_ptr<PGresult, decltype(&PQclear)> r(
      PQexec(db.conn, "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"), PQclear);
  if (PQresultStatus(r.get()) != PGRES_TUPLES_OK || PQntuples(r.get()) != 1)
    throw std::runtime_error(std::string("postgres: cannot read pg_stat_database: ") + PQerrorMessage(db.conn));
  return std::stod(PQgetvalue(r.get(), 0, 0));
}

std::uint64_t postgres_row_count(const std::string& conninfo, const std::string& table) {
  connection db(conninfo);
  std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(db.conn, ("SELECT count(*) FROM " + table).c_str()), PQclear);
  if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) return 0;  // not created yet
  return std::stoull(PQgetvalue(r.get(), 0, 0));
}

namespace {

/// A table of the user's for the json load: its payload's values, typed.
std::string events_table(const std::string& name) {
  return "CREATE TABLE " + name +
         "(weir_id TEXT PRIMARY KEY, user_id BIGINT NOT NULL, kind TEXT NOT NULL, at TIMESTAMPTZ NOT NULL)";
}

}  // namespace

void postgres_reset(const std::string& conninfo, const std::string& table) {
  connection db(conninfo);
  db.exec("DROP TABLE IF EXISTS " + table);
  if (table == "bench_events") db.exec(events_table(table));
  else if (table != "weir_records") throw std::runtime_error("weir-bench makes weir_records or bench_events, not " + table);
}

baseline_result measure_postgres_copy_table(const std::string& conninfo, double seconds) {
  return measure_copy(conninfo, "weir_bench_copy_events", events_table("weir_bench_copy_events"),
                      "COPY weir_bench_copy_events(weir_id, user_id, kind, at) FROM STDIN", seconds,
                      [](std::uint64_t n, std::string& chunk) {
                        // Ids as random as the daemon's (SHA-256s): keys land all over the index, as its do.
                        char line[128];
                        const auto a = (n + 1) * 0x9E3779B97F4A7C15ull, b = (n + 7) * 0xC2B2AE3D27D4EB4Full;
                        std::snprintf(line, sizeof line,
                                      "%016llx%016llx%016llx%016llx\t4711\tclick\t2026-12-07 10:00:00\n",
                                      static_cast<unsigned long long>(a), static_cast<unsigned long long>(b),
                                      static_cast<unsigned long long>(a ^ b), static_cast<unsigned long long>(n));
                        chunk += line;
                      });
}

}  // namespace weir::bench
