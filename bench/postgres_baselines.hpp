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

/// COPY of 10,000 rows at a time into a table made like bench_events, each
/// row the values a json load's payload maps to (its user, kind and at
/// typed by the table) under a random 64-hex id, one connection: the
/// database's own bulk load into a table of the user's; rows per second.
baseline_result measure_postgres_copy_table(const std::string& conninfo, double seconds);

/// Rows in `table` (0 while the table does not exist).
std::uint64_t postgres_row_count(const std::string& conninfo, const std::string& table);

/// Starts a delivery round on an empty `table`: weir_records is dropped (the
/// sink makes it again), bench_events made again empty, as a user's table
/// is there before the daemon starts.
void postgres_reset(const std::string& conninfo, const std::string& table);

}  // namespace weir::bench
