#pragma once
// The PostgreSQL yardsticks: what the server the scenario's sink writes to
// does with no daemon in between, measured in the same run against the same
// server (`weir-bench run ... --postgres CONNINFO`).
#include <cstdint>
#include <string>

#include "bench/baselines.hpp"

namespace weir::bench {

/// `clients` connections, each INSERTing one row per (autocommit)
/// transaction into a table keyed by a text id, as an application writing
/// straight to the database would; rows per second, all clients together.
baseline_result measure_postgres_insert(const std::string& conninfo, int clients, std::size_t payload_bytes,
                                        double seconds);

/// The server's bulk path: `COPY ... FROM STDIN` of 10,000 rows at a time
/// into a table with a sequential key, one connection; rows per second.
baseline_result measure_postgres_copy(const std::string& conninfo, std::size_t payload_bytes, double seconds);

/// 1000-row transactions of single-row INSERTs (prepared, one round trip
/// each) into a table keyed by a text id, one connection: what batching
/// commits buys an application without COPY; rows per second.
baseline_result measure_postgres_bulk(const std::string& conninfo, std::size_t payload_bytes, double seconds);

/// Transactions the server committed in the current database so far
/// (pg_stat_database.xact_commit, after the stats a backend holds are flushed).
double postgres_commits(const std::string& conninfo);

/// Rows in weir_records (0 while the table does not exist).
std::uint64_t postgres_row_count(const std::string& conninfo);

/// Drops weir_records, so that a delivery round counts only its own rows
/// (the sink creates the table again).
void postgres_reset(const std::string& conninfo);

}  // namespace weir::bench
