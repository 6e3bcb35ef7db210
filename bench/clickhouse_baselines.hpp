#pragma once
// The ClickHouse yardstick: what the server the scenario's sink writes to
// does with no daemon in between, measured in the same run against the same
// server (`weir-bench run ... --clickhouse URL`).
#include <cstdint>
#include <string>

#include "bench/baselines.hpp"

namespace weir::bench {

/// ClickHouse's own bulk path over HTTP: INSERT … FORMAT TabSeparated of
/// 10,000 rows at a time into a table shaped like weir_records (a
/// ReplacingMergeTree on the same key), one keep-alive connection; rows per second.
baseline_result measure_clickhouse_insert(const std::string& url, std::size_t payload_bytes, double seconds);

/// Rows in `table`, each copy counted (0 while the table does not exist).
std::uint64_t clickhouse_row_count(const std::string& url, const std::string& table);

/// Starts a delivery round on an empty `table`: weir_records is dropped (the
/// sink makes it again), bench_events made again empty.
void clickhouse_reset(const std::string& url, const std::string& table);

}  // namespace weir::bench
