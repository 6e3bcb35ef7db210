// Delivery into the database sinks and the file sink, end to end against the
// real daemon: SQLite (the default), PostgreSQL (a private server started by
// the test) and NDJSON files. Every acked record arrives once, under the id
// its AckTracked carried, each shard's records in order with one commit in
// flight; PostgreSQL data errors dead-letter only the offending rows. MariaDB
// (a private server too) is crashed mid-delivery together with the daemon,
// and holds a lock the sink must wait out.
#include <openssl/evp.h>
#include <signal.h>
#include <sqlite3.h>

#include <algorithm>
#include <fstream>
#include <cstdio>
#include <map>
#include <set>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sinks/base64.hpp"
#include "sinks/mysql_errors.hpp"
#include "support/daemon_process.hpp"
#include "support/mariadb_server.hpp"
#include "support/postgres_server.hpp"
#include "support/sink_contents.hpp"
#include "support/steady_producer.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "weir/client.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// Pushes from `connections` producers (several shards), mixing tiers,
/// tracked pushes and batches; returns payload -> record id for tracked ones
/// and fills `all` with every acked payload.
std::map<std::string, std::string> push_mix(const std::string& socket, int connections, int per_connection,
                                            std::vector<std::string>& all) {
  std::map<std::string, std::string> ids;
  for (int c = 0; c < connections; ++c) {
    auto conn = client::connection::connect_unix(socket);
    for (int i = 0; i < per_connection; ++i) {
      std::string p = "c";  // appended piecewise: GCC 12 warns falsely on chained + (PR 105329)
      p += std::to_string(c);
      p += '-';
      p += std::to_string(i);
      if (i % 10 == 9) {
        std::vector<std::string> batch{p + "a", p + "b", p + "c"};
        std::vector<std::span<const std::uint8_t>> spans;
        for (auto& b : batch) spans.push_back(as_bytes(b));
        REQUIRE(conn.push_batch(spans, client::durability::durable).all_accepted());
        all.insert(all.end(), batch.begin(), batch.end());
      } else if (i % 3 == 0) {
        auto r = conn.push_tracked(as_bytes(p), client::durability::durable);
        REQUIRE(r.acked);
        ids[p] = r.record_id_hex;
        all.push_back(p);
      } else {
        REQUIRE(conn.push(as_bytes(p), i % 2 ? client::durability::buffered : client::durability::durable).acked);
        all.push_back(p);
      }
    }
  }
  return ids;
}


}  // namespace

TEST_CASE("sqlite: every acked record arrives once with its tracked id and in shard order", "[live][sink][sqlite]") {
  temp_dir dir;
  daemon_process d(dir.path(), {"--set", "ingest.shards=3", "--set", "sink.concurrency=1"});
  REQUIRE(d.wait_ready());
  std::vector<std::string> all;
  const auto ids = push_mix(d.socket_path(), 6, 60, all);
  std::vector<sink_row> rows;
  REQUIRE(eventually([&] { return (rows = sqlite_rows(dir / "var/sink.db")).size() >= all.size(); }));
  REQUIRE(d.stop() == 0);
  std::set<std::string> ids_seen, payloads;
  for (const auto& r : rows) {
    ids_seen.insert(r.id);
    payloads.insert(r.payload);
    if (ids.count(r.payload)) CHECK(ids.at(r.payload) == r.id);
    CHECK(r.segment.rfind("shard_0" + std::to_string(r.shard) + "/seg_", 0) == 0);
  }
  CHECK(rows.size() == all.size());
  CHECK(ids_seen.size() == rows.size());
  for (const auto& p : all) CHECK(payloads.count(p) == 1);

  // With one commit in flight, each shard's rows were inserted in WAB order:
  // rowid order equals (segment, index) order within a shard.
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2((dir / "var/sink.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT shard, segment, idx FROM weir_records ORDER BY rowid", -1, &st, nullptr) ==
          SQLITE_OK);
  std::map<int, std::pair<std::string, std::int64_t>> last;
  bool ordered = true;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const int shard = sqlite3_column_int(st, 0);
    std::pair<std::string, std::int64_t> at{reinterpret_cast<const char*>(sqlite3_column_text(st, 1)),
                                            sqlite3_column_int64(st, 2)};
    if (last.count(shard) && !(last[shard] < at)) ordered = false;
    last[shard] = at;
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  CHECK(ordered);
  CHECK(last.size() == 3);
}

TEST_CASE("file: NDJSON lines with every field deduplicated on the id across a crash", "[live][sink][file]") {
  temp_dir dir;
  const std::vector<std::string> args{"--set", "sink.type=file", "--set", "sink.file.path=out/records.ndjson"};
  std::vector<std::string> all;
  {
    daemon_process d(dir.path(), args);
    REQUIRE(d.wait_ready());
    push_mix(d.socket_path(), 2, 40, all);
    d.stop(9);  // whatever was in flight is delivered again after the restart
  }
  daemon_process again(dir.path(), args);
  REQUIRE(again.wait_ready());
  std::vector<nlohmann::json> lines;
  auto read_lines = [&] {
    lines.clear();
    std::ifstream in(dir / "out/records.ndjson");
    std::string line;
    while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
    return lines.size();
  };
  REQUIRE(eventually([&] { return read_lines() >= all.size(); }));
  std::this_thread::sleep_for(200ms);
  read_lines();
  REQUIRE(again.stop() == 0);
  std::set<std::string> ids, payloads;
  for (const auto& j : lines) {
    for (const char* key : {"id", "shard", "segment", "idx", "ts", "payload_b64"}) CHECK(j.contains(key));
    ids.insert(j["id"].get<std::string>());
    payloads.insert(weir::base64_decode(j["payload_b64"].get<std::string>()));
  }
  CHECK(lines.size() == all.size());
  CHECK(ids.size() == lines.size());
  for (const auto& p : all) CHECK(payloads.count(p) == 1);
}

TEST_CASE("postgres: rows arrive once and survive a server restart and data errors dead-letter only the bad rows",
          "[live][sink][postgres]") {
  postgres_server pg;
  temp_dir dir;
  daemon_process d(dir.path(), {"--set", "sink.type=postgres", "--set", "sink.postgres.conninfo=" + pg.conninfo(),
                                "--set", "sink.retry.initial_ms=50", "--set", "sink.retry.max_ms=500"});
  REQUIRE(d.wait_ready());
  std::vector<std::string> all;
  const auto ids = push_mix(d.socket_path(), 3, 50, all);
  // The sink makes its table at its first commit, which may come after the first look.
  const auto rows = [&]() -> unsigned long {
    if (pg.psql("SELECT to_regclass('weir_records') IS NOT NULL") != "t\n") return 0;
    return std::stoul(pg.psql("SELECT count(*) FROM weir_records"));
  };
  REQUIRE(eventually([&] { return rows() >= all.size(); }));
  for (const auto& [payload, id] : ids)
    CHECK(pg.psql("SELECT encode(payload, 'escape') FROM weir_records WHERE id = '" + id + "'") == payload + "\n");

  // The database goes away for a moment: records keep being acked, then arrive.
  pg.stop();
  std::vector<std::string> more;
  push_mix(d.socket_path(), 1, 20, more);
  std::this_thread::sleep_for(500ms);
  pg.start();
  REQUIRE(eventually([&] {
    return std::stoul(pg.psql("SELECT count(*) FROM weir_records")) >= all.size() + more.size();
  }, 30s));
  CHECK(d.log().find("sink commit failed; retrying") != std::string::npos);

  // A constraint the table now carries refuses some rows: only they are dead-lettered.
  pg.psql("ALTER TABLE weir_records ADD CONSTRAINT no_poison CHECK (position('poison' in encode(payload, 'escape')) = 0)");
  {
    auto c = client::connection::connect_unix(d.socket_path());
    std::vector<std::string> batch{"fine-1", "poison-1", "fine-2"};
    std::vector<std::span<const std::uint8_t>> spans;
    for (auto& b : batch) spans.push_back(as_bytes(b));
    REQUIRE(c.push_batch(spans, client::durability::durable).all_accepted());
  }
  REQUIRE(eventually([&] {
    return pg.psql("SELECT count(*) FROM weir_records WHERE encode(payload, 'escape') IN ('fine-1', 'fine-2')") ==
           "2\n";
  }));
  REQUIRE(eventually([&] { return d.log().find("dead-lettered") != std::string::npos; }));
  CHECK(pg.psql("SELECT count(*) FROM weir_records WHERE encode(payload, 'escape') = 'poison-1'") == "0\n");
  CHECK(pg.psql("SELECT count(DISTINCT id) = count(*) FROM weir_records") == "t\n");
  CHECK(d.stop() == 0);
}

namespace {

/// Each payload in weir_records with how many rows carry it.
std::map<std::string, int> mysql_payload_counts(const mariadb_server& db) {
  std::map<std::string, int> out;
  for (const auto& row : db.rows("SELECT payload FROM weir_records")) ++out[row[0]];
  return out;
}

/// Rows in weir_records; 0 until the sink has made the table.
std::size_t mysql_row_count(const mariadb_server& db) {
  if (db.scalar("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'weir' AND "
                "table_name = 'weir_records'") == "0")
    return 0;
  return std::stoul(db.scalar("SELECT count(*) FROM weir_records"));
}

std::vector<std::string> with_args(std::vector<std::string> a, const std::vector<std::string>& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

}  // namespace

TEST_CASE("mysql: every acked record arrives once with its bytes across a server crash and a kill -9 of the daemon",
          "[live][sink][mysql]") {
  mariadb_server db;
  temp_dir dir;
  const auto args = with_args(db.sink_args(), {"--set", "ingest.shards=2", "--set", "sink.retry.initial_ms=50",
                                               "--set", "sink.retry.max_ms=500"});
  const auto started_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::system_clock::now().time_since_epoch()).count();
  std::vector<std::string> all;
  std::size_t at_least = 0;  // distinct payloads known to have been acked
  {
    daemon_process d(dir.path(), args);
    REQUIRE(d.wait_ready());
    const auto ids = push_mix(d.socket_path(), 3, 50, all);
    // Every byte value, and each byte the escaping must get right, next to each other.
    std::string every_byte;
    for (int b = 0; b < 256; ++b) every_byte += static_cast<char>(b);
    const std::vector<std::string> awkward{every_byte, std::string("'\\\"\0\x1a\r\n", 7) + "\xff\xfe not UTF-8 \xc3"};
    std::vector<std::string> awkward_ids;
    {
      auto c = client::connection::connect_unix(d.socket_path());
      for (const auto& p : awkward) {
        const auto r = c.push_tracked(as_bytes(p), client::durability::durable);
        REQUIRE(r.acked);
        awkward_ids.push_back(r.record_id_hex);
        all.push_back(p);
      }
    }
    REQUIRE(eventually([&] { return mysql_row_count(db) >= all.size(); }));
    std::size_t checked = 0;
    for (const auto& [payload, id] : ids) {
      CHECK(db.scalar("SELECT payload FROM weir_records WHERE id = '" + id + "'") == payload);
      ++checked;
    }
    for (std::size_t i = 0; i < awkward.size(); ++i, ++checked)
      CHECK(db.scalar("SELECT payload FROM weir_records WHERE id = '" + awkward_ids[i] + "'") == awkward[i]);
    CHECK(checked == ids.size() + awkward.size());
    CHECK(checked > awkward.size());
    // The other columns: the record's coordinate, and its ingest time.
    const auto row = db.rows("SELECT node, shard, seq, idx, segment, ts FROM weir_records WHERE id = '" +
                             awkward_ids[0] + "'");
    REQUIRE(row.size() == 1);
    char segment[64];
    std::snprintf(segment, sizeof segment, "shard_%02d/seg_%08llu.wab", std::stoi(row[0][1]),
                  static_cast<unsigned long long>(std::stoull(row[0][2])));
    CHECK(row[0][0] == "0");
    CHECK(row[0][4] == segment);
    CHECK(std::stoull(row[0][3]) >= 1);
    CHECK(std::stoll(row[0][5]) >= started_ns);

    // A producer keeps pushing while the server dies under delivery and then
    // the daemon dies too: no commit of those records can have finished.
    steady_producer producer(d.socket_path(), "live-");
    const auto before = mysql_row_count(db);
    REQUIRE(eventually([&] { return mysql_row_count(db) >= before + 200; }));
    db.kill();
    REQUIRE(eventually([&] { return d.log().find("sink commit failed; retrying") != std::string::npos; }));
    ::kill(d.pid(), SIGKILL);
    const auto live = producer.join();
    all.insert(all.end(), live.begin(), live.end());
    at_least = ids.size() + awkward.size() + 200;  // the producer's first 200 reached the table
    CHECK(d.wait_exit() == 128 + SIGKILL);
  }
  db.start();
  daemon_process again(dir.path(), args);
  REQUIRE(again.wait_ready());
  REQUIRE(eventually([&] { return mysql_row_count(db) >= all.size(); }, 60s));
  // push_mix's payloads are distinct; each acked one is there exactly once.
  // (The one push in flight at the kill may or may not have been stored.)
  std::map<std::string, int> acked;
  for (const auto& p : all) ++acked[p];
  const auto stored = mysql_payload_counts(db);
  std::size_t checked = 0;
  for (const auto& [payload, n] : acked) {
    const auto it = stored.find(payload);
    INFO(payload);
    CHECK((it != stored.end() && it->second == n));
    ++checked;
  }
  CHECK(checked == acked.size());
  CHECK(checked >= at_least);
  CHECK(mysql_row_count(db) <= all.size() + 1);
  CHECK(db.scalar("SELECT count(DISTINCT id) = count(*) FROM weir_records") == "1");
  CHECK(dead_letter_files(dir / "var") == 0);
  CHECK(again.stop() == 0);
}

TEST_CASE("mysql: a lock wait is retried and refused values dead-letter only their rows", "[live][sink][mysql]") {
  mariadb_server db;
  // Too-large payloads meet a 1 MiB max_allowed_packet (read by new connections).
  db.execute("SET GLOBAL max_allowed_packet = 1048576");
  temp_dir dir;
  // sink.timeout_ms = 2 s: the sink's lock waits give up after 1 s (error 1205).
  daemon_process d(dir.path(), with_args(db.sink_args(), {"--set", "sink.timeout_ms=2000", "--set",
                                                          "sink.retry.initial_ms=50", "--set", "sink.retry.max_ms=300"}));
  REQUIRE(d.wait_ready());
  auto c = client::connection::connect_unix(d.socket_path());
  REQUIRE(c.push(as_bytes(std::string("first")), client::durability::durable).acked);
  REQUIRE(eventually([&] { return mysql_row_count(db) == 1; }));

  {
    // Another transaction holds the table's rows and the gap after them.
    mariadb_server::session holder(db);
    holder.rows("START TRANSACTION");
    holder.rows("SELECT * FROM weir_records FOR UPDATE");
    REQUIRE(c.push(as_bytes(std::string("waited")), client::durability::durable).acked);
    REQUIRE(eventually([&] { return d.log().find("error 1205") != std::string::npos; }));
    holder.rows("COMMIT");
  }
  REQUIRE(eventually([&] { return mysql_row_count(db) == 2; }));
  CHECK(dead_letter_files(dir / "var") == 0);

  // A CHECK constraint refuses one value; a 2 MiB payload cannot fit a packet.
  db.execute("ALTER TABLE weir_records ADD CONSTRAINT no_poison CHECK (LOCATE('poison', payload) = 0)");
  std::vector<std::string> batch{"fine-1", "poison-1", std::string(2 * 1024 * 1024, 'x'), "fine-2"};
  std::vector<std::span<const std::uint8_t>> spans;
  for (auto& b : batch) spans.push_back(as_bytes(b));
  REQUIRE(c.push_batch(spans, client::durability::durable).all_accepted());
  REQUIRE(eventually([&] { return mysql_row_count(db) == 4; }));
  // The rows commit first; the refused ones are stored in the dead letters
  // before the batch is confirmed.
  REQUIRE(eventually([&] {
    return dead_lettered(dir / "var", "poison-1") && dead_lettered(dir / "var", "max_allowed_packet");
  }));
  const auto counts = mysql_payload_counts(db);
  CHECK(counts.count("fine-1") == 1);
  CHECK(counts.count("fine-2") == 1);
  CHECK(counts.count("poison-1") == 0);
  CHECK(counts.count(batch[2]) == 0);
  CHECK(dead_lettered(dir / "var", "error 4025"));
  CHECK(dead_letter_files(dir / "var") == 1);

  // A unique key of the user's own: a different record that clashes on it
  // is refused and dead-lettered, never taken for a redelivery and dropped.
  db.execute("ALTER TABLE weir_records ADD UNIQUE KEY one_each (payload(32))");
  REQUIRE(c.push(as_bytes(std::string("fine-1")), client::durability::durable).acked);
  REQUIRE(c.push(as_bytes(std::string("after")), client::durability::durable).acked);
  REQUIRE(eventually([&] { return mysql_row_count(db) == 5; }));
  REQUIRE(eventually([&] { return dead_lettered(dir / "var", "error 1048"); }));
  CHECK(mysql_payload_counts(db).at("fine-1") == 1);
  CHECK(d.stop() == 0);
}

TEST_CASE("mysql: error numbers are transient unless they are about a row's data", "[sink][mysql]") {
  struct expectation {
    unsigned number;
    mysql_error_class cls;
  };
  const std::vector<expectation> cases{
      {1205, mysql_error_class::transient},  // lock wait timeout
      {1213, mysql_error_class::transient},  // deadlock
      {1290, mysql_error_class::transient},  // read-only server
      {1045, mysql_error_class::transient},  // access denied: a configuration to fix, not data
      {1146, mysql_error_class::transient},  // no such table
      {1153, mysql_error_class::transient},  // packet too large: the sink keeps rows under it
      {1969, mysql_error_class::transient},  // max_statement_time
      {2002, mysql_error_class::transient},  // cannot connect
      {2006, mysql_error_class::transient},  // server gone
      {2013, mysql_error_class::transient},  // lost connection mid-query
      {1048, mysql_error_class::row_data},   // null into NOT NULL
      {1366, mysql_error_class::row_data},   // incorrect value
      {1406, mysql_error_class::row_data},   // too long
      {1452, mysql_error_class::row_data},   // foreign key
      {1644, mysql_error_class::row_data},   // a trigger's SIGNAL
      {3819, mysql_error_class::row_data},   // MySQL CHECK
      {4025, mysql_error_class::row_data},   // MariaDB CHECK
  };
  for (const auto& e : cases) {
    INFO("error " << e.number);
    CHECK(classify_mysql_error(e.number) == e.cls);
  }
}
