#pragma once
// Reads back what a sink holds, for delivery tests.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace weir::test {

struct sink_row {
  std::string id;
  int shard = 0;
  std::string segment;
  std::uint64_t index = 0;
  std::int64_t ts = 0;
  std::string payload;
};

/// Every row of weir_records in an SQLite sink, ordered by segment and index
/// (empty when the database or the table does not exist yet).
std::vector<sink_row> sqlite_rows(const std::filesystem::path& db);
/// Runs `sql` on the SQLite database at `db` (made when missing); a failure
/// fails the test with SQLite's message.
void sqlite_exec(const std::filesystem::path& db, const std::string& sql);

/// How many dead-letter files the daemon with this data_dir wrote.
std::size_t dead_letter_files(const std::filesystem::path& data_dir);
/// Whether `needle` occurs in any dead-letter file (the envelope keeps the payload bytes).
bool dead_lettered(const std::filesystem::path& data_dir, const std::string& needle);

}  // namespace weir::test
