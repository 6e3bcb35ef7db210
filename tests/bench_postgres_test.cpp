// weir-bench's PostgreSQL, MariaDB and HTTP scenarios and yardsticks work
// against a real server (not how fast anything is: timing lives in
// weir-bench runs).
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/clickhouse_server.hpp"
#include "support/daemon_process.hpp"
#include "support/mariadb_server.hpp"
#include "support/nginx_server.hpp"
#include "support/postgres_server.hpp"
#include "support/test_paths.hpp"

namespace {

/// What the test asks of the server a round ran against.
struct server_view {
  std::vector<std::string> bench_args;           // how weir-bench is told of it
  std::function<double()> sink_rows;             // rows in weir_records
  std::function<double()> bench_tables;          // the bench's own tables left behind
};

void check_bench_runs(const std::string& scenario, const std::string& baseline, const server_view& server) {
  weir::test::temp_dir dir;
  std::vector<std::string> args{"run", (weir::test::source_dir() / "bench/scenarios" / (scenario + ".yaml")).string(),
                                "--seconds", "0.5", "--repeat", "1", "--workdir", dir.path().string()};
  args.insert(args.end(), server.bench_args.begin(), server.bench_args.end());
  const auto r = weir::test::run_binary(weir::test::binary("weir-bench"), args, dir.path());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto at = r.out.find("BENCH: ");
  REQUIRE(at != std::string::npos);
  const auto j = nlohmann::json::parse(r.out.substr(at + 7, r.out.find('\n', at) - at - 7));
  CHECK(j.at("baseline") == baseline);
  CHECK(j.at("measure") == "delivery");
  // Every acked record reached the table (the round waits for it), and the
  // yardstick measured something.
  CHECK(j.at("records").get<double>() > 0);
  CHECK(j.at("records_per_s").get<double>() > 0);
  CHECK(j.at("baseline_records_per_s").get<double>() > 0);
  CHECK(j.at("ratio").get<double>() > 0);
  // The daemon's own counts: what each sink commit and each fdatasync carried.
  CHECK(j.at("records_per_commit").get<double>() >= 1);
  CHECK(j.at("records_per_fsync").get<double>() >= 1);
  // The rows equal the acked records at least (each acked record arrived).
  CHECK(server.sink_rows() >= j.at("records").get<double>());
  // The bench's own tables are gone; the sink's holds this round's rows.
  CHECK(server.bench_tables() == 0);
}

server_view view_of(const weir::test::postgres_server& pg, const std::string& table = "weir_records") {
  return {{"--postgres", pg.conninfo()},
          [&pg, table] { return std::stod(pg.psql("SELECT count(*) FROM " + table)); },
          [&pg] { return std::stod(pg.psql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'weir_bench_%'")); }};
}

}  // namespace

TEST_CASE("weir-bench: PostgreSQL delivery against COPY runs against a real server", "[live][bench][postgres]") {
  weir::test::postgres_server pg;
  check_bench_runs("deliver-postgres-copy", "postgres_copy", view_of(pg));
}

TEST_CASE("weir-bench: delivery into a table of the user's against COPY into one runs against a real server",
          "[live][bench][postgres]") {
  weir::test::postgres_server pg;
  check_bench_runs("deliver-postgres-table", "postgres_copy_table", view_of(pg, "bench_events"));
  // Typed rows from the JSON payloads, none of them dead-lettered.
  CHECK(pg.psql("SELECT count(*) FROM bench_events WHERE user_id = 4711 AND kind = 'click' AND "
                "at = '2026-12-07 10:00:00'") == pg.psql("SELECT count(*) FROM bench_events"));
}

TEST_CASE("weir-bench: 16 pipelined producers into PostgreSQL against autocommit INSERTs run against a real server",
          "[live][bench][postgres]") {
  weir::test::postgres_server pg;
  check_bench_runs("durable-16-postgres", "postgres_insert", view_of(pg));
}

TEST_CASE("weir-bench: MariaDB delivery against LOAD DATA runs against a real server", "[live][bench][mysql]") {
  weir::test::mariadb_server db;
  const std::string settings = "host=127.0.0.1 port=" + std::to_string(db.port()) +
                               " user=weir database=weir password_file=" + db.password_file().string();
  check_bench_runs("deliver-mysql-load", "mysql_load",
                   {{"--mysql", settings},
                    [&db] { return std::stod(db.scalar("SELECT count(*) FROM weir_records")); },
                    [&db] {
                      return std::stod(db.scalar("SELECT count(*) FROM information_schema.tables WHERE "
                                                 "table_schema = 'weir' AND table_name LIKE 'weir_bench_%'"));
                    }});
}

TEST_CASE("weir-bench: HTTP raw delivery against keep-alive POSTs runs against nginx", "[live][bench][http]") {
  weir::test::nginx_server nginx;
  // Every POST to /fast is counted, the baseline's too: at least the acked records.
  check_bench_runs("deliver-http-raw", "http_post",
                   {{"--http", nginx.fast_url()},
                    [&nginx] { return static_cast<double>(nginx.fast_requests()); },
                    [] { return 0.0; }});
}

namespace {

server_view view_of(const weir::test::clickhouse_server& ch, const std::string& table) {
  return {{"--clickhouse", "http://127.0.0.1:" + std::to_string(ch.http_port()) + "/"},
          [&ch, table] { return std::stod(ch.query("SELECT count() FROM " + table + " FINAL")); },
          [&ch] { return std::stod(ch.query("SELECT count() FROM system.tables WHERE name LIKE 'weir_bench_%'")); }};
}

}  // namespace

TEST_CASE("weir-bench: ClickHouse delivery against its own bulk insert runs against a real server",
          "[live][bench][clickhouse]") {
  weir::test::clickhouse_server ch;
  check_bench_runs("deliver-clickhouse", "clickhouse_insert", view_of(ch, "weir_records"));
  check_bench_runs("deliver-clickhouse-table", "clickhouse_insert", view_of(ch, "bench_events"));
  CHECK(ch.query("SELECT count() FROM bench_events FINAL WHERE user_id = 4711 AND kind = 'click' AND "
                 "at = toDateTime('2026-12-07 10:00:00')") == ch.query("SELECT count() FROM bench_events FINAL"));
}
