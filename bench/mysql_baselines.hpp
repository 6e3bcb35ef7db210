#pragma once
// The MariaDB/MySQL yardstick: what the server the scenario's sink writes to
// does with no daemon in between, measured in the same run against the same
// server (`weir-bench run ... --mysql SETTINGS`).
#include <cstdint>
#include <map>
#include <string>

#include "bench/baselines.hpp"

namespace weir::bench {

/// "host=H port=P user=U database=D" (and socket=, password_file=): the
/// sink.mysql.* settings the daemon is given, and what the baseline connects
/// with. The password comes from password_file or WEIR_SINK_MYSQL_PASSWORD.
/// Throws naming a key that is not one of those.
std::map<std::string, std::string> parse_mysql_settings(const std::string& text);

/// The server's bulk path: LOAD DATA LOCAL INFILE of 10,000 rows at a time
/// (streamed from memory) into a table with a sequential key, one
/// connection, a transaction each; rows per second.
baseline_result measure_mysql_load(const std::map<std::string, std::string>& settings, std::size_t payload_bytes,
                                   double seconds);

/// Rows in weir_records (0 while the table does not exist).
std::uint64_t mysql_row_count(const std::map<std::string, std::string>& settings);

/// Drops weir_records, so that a delivery round counts only its own rows.
void mysql_reset(const std::map<std::string, std::string>& settings);

}  // namespace weir::bench
