#include "bench/clickhouse_baselines.hpp"

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "bench/load_driver.hpp"
#include "config/http_url.hpp"
#include "sinks/clickhouse_client.hpp"

namespace weir::bench {

namespace {

using clock = std::chrono::steady_clock;

/// A client of the server at `url` as user default, without a password.
clickhouse_client client_of(const std::string& url) {
  std::string why;
  auto parsed = parse_http_url(url, why);
  if (!parsed || parsed->tls) throw std::runtime_error("--clickhouse " + url + ": expected an http:// URL");
  auto s = std::make_shared<clickhouse_settings>();
  s->url = *parsed;
  s->database = "default";
  s->user = "default";
  s->password = std::make_shared<reloadable_secret>("", "", "WEIR_BENCH_NO_SUCH_VARIABLE");
  s->timeout_ms = 60'000;
  return clickhouse_client(s);
}

void run_or_throw(clickhouse_client& c, const std::string& sql, std::string& data) {
  const auto a = c.run(sql, data);
  if (!a.ok) throw std::runtime_error("clickhouse: " + sql.substr(0, 60) + ": " + a.error);
}

void run_or_throw(clickhouse_client& c, const std::string& sql) {
  std::string none;
  run_or_throw(c, sql, none);
}

}  // namespace

baseline_result measure_clickhouse_insert(const std::string& url, std::size_t payload_bytes, double seconds) {
  constexpr int rows_per_insert = 10'000;
  auto c = client_of(url);
  run_or_throw(c, "DROP TABLE IF EXISTS weir_bench_insert");
  run_or_throw(c, "CREATE TABLE weir_bench_insert (id String, node UInt16, shard UInt16, seq UInt64, idx UInt64, "
                  "segment String, ts Int64, payload String) ENGINE = ReplacingMergeTree ORDER BY (node, shard, seq, "
                  "idx, id)");
  const std::string payload(payload_bytes, 'w');
  std::vector<double> lat;
  std::uint64_t rows = 0;
  std::string body;
  const auto start = clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  while (clock::now() < deadline) {
    body.clear();
    for (int i = 0; i < rows_per_insert; ++i, ++rows) {
      char line[160];
      const auto a = (rows + 1) * 0x9E3779B97F4A7C15ull;
      std::snprintf(line, sizeof line, "%016llx%048llu\t0\t0\t%llu\t%llu\tshard_00/seg_00000001.wab\t%llu\t",
                    static_cast<unsigned long long>(a), static_cast<unsigned long long>(rows),
                    static_cast<unsigned long long>(rows / 100000), static_cast<unsigned long long>(rows),
                    static_cast<unsigned long long>(rows));
      body += line;
      body += payload;
      body += '\n';
    }
    const auto t0 = clock::now();
    run_or_throw(c, "INSERT INTO weir_bench_insert FORMAT TabSeparated", body);
    lat.push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
  }
  const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
  run_or_throw(c, "DROP TABLE weir_bench_insert");
  return {static_cast<double>(rows) / elapsed, quantile(lat, 0.5)};
}

std::uint64_t clickhouse_row_count(const std::string& url, const std::string& table) {
  auto c = client_of(url);
  std::vector<std::vector<std::string>> rows;
  const auto a = c.select("SELECT count() FROM " + table, rows);
  if (!a.ok || rows.empty()) return 0;  // not made yet
  return std::stoull(rows[0][0]);
}

void clickhouse_reset(const std::string& url, const std::string& table) {
  auto c = client_of(url);
  run_or_throw(c, "DROP TABLE IF EXISTS " + table);
  if (table == "bench_events")
    run_or_throw(c, "CREATE TABLE bench_events (weir_id String, user_id UInt64, kind String, at DateTime) "
                    "ENGINE = ReplacingMergeTree ORDER BY weir_id");
  else if (table != "weir_records")
    throw std::runtime_error("weir-bench makes weir_records or bench_events, not " + table);
}

}  // namespace weir::bench
