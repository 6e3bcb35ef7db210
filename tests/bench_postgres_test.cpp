// weir-bench's PostgreSQL scenarios and yardsticks work against a real
// server (not how fast anything is: timing lives in weir-bench runs).
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/daemon_process.hpp"
#include "support/postgres_server.hpp"
#include "support/test_paths.hpp"

namespace {

void check_bench_runs(const std::string& scenario, const std::string& baseline) {
  weir::test::postgres_server pg;
  weir::test::temp_dir dir;
  const auto r = weir::test::run_binary(
      weir::test::binary("weir-bench"),
      {"run", (weir::test::source_dir() / "bench/scenarios" / (scenario + ".yaml")).string(), "--seconds", "0.5",
       "--repeat", "1", "--workdir", dir.path().string(), "--postgres", pg.conninfo()},
      dir.path());
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
  CHECK(std::stod(pg.psql("SELECT count(*) FROM weir_records")) >= j.at("records").get<double>());
  // The bench's own tables are gone; the sink's holds this round's rows.
  CHECK(pg.psql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'weir_bench_%'") == "0\n");
}

}  // namespace

TEST_CASE("weir-bench: PostgreSQL delivery against COPY runs against a real server", "[live][bench][postgres]") {
  check_bench_runs("deliver-postgres-copy", "postgres_copy");
}

TEST_CASE("weir-bench: 16 pipelined producers into PostgreSQL against autocommit INSERTs run against a real server",
          "[live][bench][postgres]") {
  check_bench_runs("durable-16-postgres", "postgres_insert");
}
