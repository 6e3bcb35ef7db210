#include "support/sink_contents.hpp"

#include <sqlite3.h>

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

namespace weir::test {

std::vector<sink_row> sqlite_rows(const std::filesystem::path& db_path) {
  std::vector<sink_row> out;
  if (!std::filesystem::exists(db_path)) return out;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return out;
  }
  sqlite3_busy_timeout(db, 5000);
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT id, shard, segment, idx, ts, payload FROM weir_records ORDER BY segment, idx",
                         -1, &st, nullptr) == SQLITE_OK) {
    while (sqlite3_step(st) == SQLITE_ROW) {
      sink_row r;
      r.id = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
      r.shard = sqlite3_column_int(st, 1);
      r.segment = reinterpret_cast<const char*>(sqlite3_column_text(st, 2));
      r.index = static_cast<std::uint64_t>(sqlite3_column_int64(st, 3));
      r.ts = sqlite3_column_int64(st, 4);
      const auto* p = static_cast<const char*>(sqlite3_column_blob(st, 5));
      r.payload.assign(p ? p : "", static_cast<std::size_t>(sqlite3_column_bytes(st, 5)));
      out.push_back(std::move(r));
    }
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

std::size_t dead_letter_files(const std::filesystem::path& data_dir) {
  std::size_t n = 0;
  if (std::filesystem::exists(data_dir / "dead_letter"))
    for (const auto& e : std::filesystem::directory_iterator(data_dir / "dead_letter"))
      n += e.path().filename().string().rfind("dl_", 0) == 0 ? 1 : 0;
  return n;
}

bool dead_lettered(const std::filesystem::path& data_dir, const std::string& needle) {
  if (!std::filesystem::exists(data_dir / "dead_letter")) return false;
  for (const auto& e : std::filesystem::directory_iterator(data_dir / "dead_letter")) {
    std::ifstream in(e.path(), std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (all.find(needle) != std::string::npos) return true;
  }
  return false;
}

void sqlite_exec(const std::filesystem::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(db_path.c_str(), &db) == SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  INFO((err ? err : ""));
  sqlite3_free(err);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

}  // namespace weir::test
