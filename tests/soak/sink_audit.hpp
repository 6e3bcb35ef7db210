#pragma once
// Compares the SQLite sink with what the producers were told.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "soak/ledger.hpp"

namespace weir::soak {

struct audit_result {
  std::uint64_t rows = 0;
  std::uint64_t acked = 0;               // acked by the daemon, all producers
  std::uint64_t lost = 0;                // acked, no row with its payload
  std::uint64_t duplicates = 0;          // records with more than one row
  std::uint64_t order_violations = 0;    // an acked record after a later one of its producer, same shard
  std::uint64_t tracked_mismatches = 0;  // AckTracked named a coordinate or id no row has
  std::uint64_t foreign_rows = 0;        // payloads no producer made (or damaged ones)
  std::uint64_t unknown_delivered = 0;   // no reply came, stored anyway (allowed)
  std::uint64_t nacked_delivered = 0;    // Nack'd, stored anyway (allowed: the Nack says "not acked", not "absent")
  std::vector<std::string> examples;     // the first few problems, for the report
  std::vector<record_origin> lost_records;  // the first few lost ones, to look for in the WAB
};

/// Number of rows in weir_records; -1 while the database or table is missing.
std::int64_t sink_row_count(const std::filesystem::path& db);

/// Reads every row once, in write order per shard. `ledgers` must not change
/// meanwhile (their producers are joined).
audit_result audit_sink(const std::filesystem::path& db, const std::vector<std::unique_ptr<ledger>>& ledgers);

}  // namespace weir::soak
