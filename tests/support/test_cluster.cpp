#include "support/test_cluster.hpp"

#include <catch2/catch.hpp>
#include <sqlite3.h>

namespace weir::test {

cluster3::cluster3(int replicas_) : replicas(replicas_) {
  const auto made =
      run_binary(binary("weir-ctl"), {"cluster", "certs", "--out", certs().string(), "--nodes", "1-4"}, root.path());
  INFO(made.out + made.err);
  REQUIRE(made.exit_code == 0);
}

std::filesystem::path cluster3::dir(int i) const {
  std::string name = "n";
  name += std::to_string(i + 1);
  return root / name;
}

/// Payloads in the sink, with how often each appears (duplicates collapse on the key).
std::map<std::string, int> sink_payloads(const std::string& path) {
  std::map<std::string, int> out;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return out;
  }
  sqlite3_busy_timeout(db, 2000);
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT payload FROM weir_records", -1, &st, nullptr) == SQLITE_OK)
    while (sqlite3_step(st) == SQLITE_ROW)
      ++out[std::string(static_cast<const char*>(sqlite3_column_blob(st, 0)), sqlite3_column_bytes(st, 0))];
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

/// The acked payloads the sink lacks, the first few, for a failure's message.
std::string missing(const std::string& path, const std::set<std::string>& acked) {
  const auto rows = sink_payloads(path);
  std::string out;
  int n = 0;
  for (const auto& p : acked)
    if (!rows.count(p) && n++ < 20) out += p + " ";
  return out + "(" + std::to_string(n) + " in all)";
}

bool sink_holds_all(const std::string& path, const std::set<std::string>& acked) {
  const auto rows = sink_payloads(path);
  for (const auto& p : acked)
    if (!rows.count(p)) return false;
  return true;
}

}  // namespace weir::test
