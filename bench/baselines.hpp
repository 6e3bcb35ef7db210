#pragma once
// The physical references a scenario is compared with, measured in the same
// run on the same machine: what the disk and the socket can do with no
// daemon in between.
#include <cstdint>
#include <string>

namespace weir::bench {

struct baseline_result {
  double ops_per_s = 0;
  double p50_us = 0;
};

/// Appends `bytes_per_op` bytes and fdatasyncs, over and over, in a fresh file
/// in `dir` (put it on the WAB's filesystem).
baseline_result measure_fsync(const std::string& dir, std::size_t bytes_per_op, double seconds);

/// The same over a file of 64 MiB of written zeros, synced first, overwritten
/// from the start again and again: what a preallocated segment costs.
baseline_result measure_overwrite_fsync(const std::string& dir, std::size_t bytes_per_op, double seconds);

/// Round trips over a Unix socket pair to an echo thread: `request_bytes`
/// out, a 24-byte answer back (the size of an Ack frame).
baseline_result measure_socket_round_trip(std::size_t request_bytes, double seconds);

/// One INSERT per transaction (the per-record commit weir exists to avoid)
/// into the sink's table in a fresh SQLite database in `dir` (WAL,
/// synchronous=FULL, as the SQLite sink runs it).
baseline_result measure_sqlite_insert(const std::string& dir, std::size_t payload_bytes, double seconds);

/// The database's own bulk path: 1000-row transactions into a table with a
/// sequential key (same columns, rows as wide as the sink's, same pragmas),
/// rows per second.
baseline_result measure_sqlite_bulk(const std::string& dir, std::size_t payload_bytes, double seconds);

/// Rows in weir_records of the SQLite database at `path` (0 while it does not exist).
std::uint64_t sqlite_row_count(const std::string& path);

}  // namespace weir::bench
