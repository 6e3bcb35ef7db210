// The SQL sinks' table: keyed by the record's coordinate (so inserts append
// to the key's index), deduplicating exactly as the id would, and a table of
// the first schema (id TEXT PRIMARY KEY) moved to it without losing a row.
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "config/loader.hpp"
#include "sinks/postgres_copy.hpp"
#include "sinks/sink.hpp"
#include "support/postgres_server.hpp"
#include "support/sink_contents.hpp"
#include "support/test_paths.hpp"

using namespace weir;

namespace {

std::shared_ptr<sink_factory> sqlite_factory_at(const std::filesystem::path& db) {
  config_sources src;
  src.file_required = false;
  src.overrides = {"sink.type=sqlite", "sink.sqlite.path=" + db.string()};
  return make_sink_factory(load_config(src));
}

sink_record record(std::uint16_t shard, std::uint64_t seq, std::uint64_t index, const std::string& payload,
                   const std::string& id_suffix = "") {
  sink_record r;
  r.shard = shard;
  r.sequence = seq;
  r.index = index;
  char name[32];
  std::snprintf(name, sizeof name, "shard_%02u/seg_%08llu.wab", shard, static_cast<unsigned long long>(seq));
  r.segment = name;
  r.id = "id-" + std::string(name) + "-" + std::to_string(index) + id_suffix;
  r.ts_ns = 42;
  r.payload.assign(payload.begin(), payload.end());
  return r;
}

/// (shard, seq, idx, id, payload) of every row, in arrival order.
std::vector<std::string> rows(const std::filesystem::path& db_path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  std::vector<std::string> out;
  if (sqlite3_prepare_v2(db, "SELECT shard, seq, idx, id, CAST(payload AS TEXT) FROM weir_records ORDER BY rowid", -1,
                         &st, nullptr) == SQLITE_OK)
    while (sqlite3_step(st) == SQLITE_ROW)
      out.push_back(std::to_string(sqlite3_column_int(st, 0)) + "/" + std::to_string(sqlite3_column_int64(st, 1)) +
                    "/" + std::to_string(sqlite3_column_int64(st, 2)) + " " +
                    reinterpret_cast<const char*>(sqlite3_column_text(st, 3)) + " " +
                    reinterpret_cast<const char*>(sqlite3_column_text(st, 4)));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}


}  // namespace

TEST_CASE("sqlite: the coordinate key keeps one row per record whatever the redelivery", "[sink][sqlite][schema]") {
  test::temp_dir dir;
  const auto db = dir / "sink.db";
  auto sink = sqlite_factory_at(db)->make();
  // Same index in another segment or shard is another record; the same coordinate is the same one.
  REQUIRE(sink->commit({record(0, 1, 1, "a"), record(0, 1, 2, "b"), record(0, 2, 1, "c"), record(1, 1, 1, "d")})
              .kind == commit_result::outcome::committed);
  REQUIRE(sink->commit({record(0, 1, 2, "b"), record(1, 1, 1, "d"), record(1, 1, 2, "e")}).kind ==
          commit_result::outcome::committed);
  const auto got = rows(db);
  REQUIRE(got.size() == 5);
  CHECK(got[0] == "0/1/1 id-shard_00/seg_00000001.wab-1 a");
  CHECK(got[4] == "1/1/2 id-shard_01/seg_00000001.wab-2 e");
}

namespace {

std::string numbered(const char* prefix, std::uint64_t i) {
  std::string s = prefix;
  s += std::to_string(i);
  return s;
}

}  // namespace

TEST_CASE("sqlite: a batch larger than one INSERT statement keeps every row once and in order",
          "[sink][sqlite][schema]") {
  test::temp_dir dir;
  const auto db = dir / "sink.db";
  auto sink = sqlite_factory_at(db)->make();
  // 137 rows: whole multi-row statements and single-row ones after them.
  std::vector<sink_record> first;
  for (std::uint64_t i = 1; i <= 137; ++i) first.push_back(record(0, 3, i, numbered("p", i)));
  REQUIRE(sink->commit(first).kind == commit_result::outcome::committed);
  // A redelivery from the middle on, with new records after it and one record
  // twice inside what one statement carries.
  std::vector<sink_record> again;
  for (std::uint64_t i = 90; i <= 200; ++i) again.push_back(record(0, 3, i, numbered("p", i)));
  REQUIRE(again[60].index == 150);
  again.insert(again.begin() + 62, record(0, 3, 150, numbered("p", 150)));
  REQUIRE(sink->commit(again).kind == commit_result::outcome::committed);
  const auto got = rows(db);
  REQUIRE(got.size() == 200);
  std::size_t checked = 0;
  for (std::uint64_t i = 1; i <= 200; ++i, ++checked)
    REQUIRE(got[i - 1] ==
            numbered("0/3/", i) + numbered(" id-shard_00/seg_00000003.wab-", i) + numbered(" p", i));
  CHECK(checked == 200);
}

TEST_CASE("sqlite: another record at a coordinate already used is kept and not taken for a redelivery",
          "[sink][sqlite][schema]") {
  test::temp_dir dir;
  const auto db = dir / "sink.db";
  auto sink = sqlite_factory_at(db)->make();
  // A wiped data_dir starts again at seg_00000001 into the same database: same
  // coordinate, another payload, so another id.
  // It was written later: another ingest time.
  REQUIRE(sink->commit({record(0, 1, 1, "first life")}).kind == commit_result::outcome::committed);
  auto second_life = record(0, 1, 1, "second life", "-again");
  second_life.ts_ns += 1;
  REQUIRE(sink->commit({second_life, record(0, 1, 1, "first life")}).kind == commit_result::outcome::committed);
  const auto got = rows(db);
  REQUIRE(got.size() == 2);
  CHECK(got[1] == "0/1/1 id-shard_00/seg_00000001.wab-1-again second life");
}

TEST_CASE("sqlite: a table of the first schema moves to the coordinate key and keeps every row",
          "[sink][sqlite][schema][migration]") {
  test::temp_dir dir;
  const auto db = dir / "sink.db";
  test::sqlite_exec(db,
       "CREATE TABLE weir_records(id TEXT PRIMARY KEY, shard INTEGER, segment TEXT, idx INTEGER, ts INTEGER, "
       "payload BLOB);"
       "INSERT INTO weir_records VALUES('id-shard_00/seg_00000007.wab-1', 0, 'shard_00/seg_00000007.wab', 1, 42, 'old1');"
       "INSERT INTO weir_records VALUES('id-shard_01/seg_00012345.wab-9', 1, 'shard_01/seg_00012345.wab', 9, 6, 'old2');");
  auto sink = sqlite_factory_at(db)->make();
  // A redelivery of a migrated record is still recognised; a new one goes in after them.
  REQUIRE(sink->commit({record(0, 7, 1, "old1"), record(0, 8, 1, "new")}).kind == commit_result::outcome::committed);
  const auto got = rows(db);
  REQUIRE(got.size() == 3);
  CHECK(got[0] == "0/7/1 id-shard_00/seg_00000007.wab-1 old1");
  CHECK(got[1] == "1/12345/9 id-shard_01/seg_00012345.wab-9 old2");
  CHECK(got[2] == "0/8/1 id-shard_00/seg_00000008.wab-1 new");
  // And a second start finds nothing left to move.
  auto again = sqlite_factory_at(db)->make();
  REQUIRE(again->commit({record(0, 8, 1, "new")}).kind == commit_result::outcome::committed);
  CHECK(rows(db).size() == 3);
}

namespace {

/// The columns of weir_records' primary key, in order, comma-separated.
std::string sqlite_key(const std::filesystem::path& db_path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  std::string key;
  if (sqlite3_prepare_v2(db,
                         "SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_index_info((SELECT name FROM "
                         "pragma_index_list('weir_records') WHERE origin = 'pk')) ORDER BY seqno)",
                         -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
    key = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return key;
}

/// The SQL block docs/sinks.md shows after `marker`.
std::string documented_sql(const std::string& marker) {
  std::ifstream in(test::source_dir() / "docs/sinks.md");
  std::string line, sql;
  bool after_marker = false, inside = false;
  while (std::getline(in, line)) {
    if (!after_marker) {
      after_marker = line.find(marker) != std::string::npos;
      continue;
    }
    if (!inside) {
      inside = line == "```sql";
      continue;
    }
    if (line == "```") break;
    sql += line + "\n";
  }
  return sql;
}

constexpr const char* keyed_by_id =
    "CREATE TABLE weir_records(node INTEGER NOT NULL DEFAULT 0, shard INTEGER NOT NULL, seq INTEGER NOT NULL, "
    "idx INTEGER NOT NULL, id TEXT NOT NULL, segment TEXT NOT NULL, ts INTEGER, payload BLOB, "
    "PRIMARY KEY (node, shard, seq, idx, id));";

}  // namespace

TEST_CASE("sqlite: a new table is keyed on integers: the coordinate and the ingest time", "[sink][sqlite][schema]") {
  test::temp_dir dir;
  const auto db = dir / "sink.db";
  auto sink = sqlite_factory_at(db)->make();
  REQUIRE(sink->commit({record(0, 1, 1, "a")}).kind == commit_result::outcome::committed);
  CHECK(sqlite_key(db) == "node,shard,seq,idx,ts");
}

TEST_CASE("sqlite: a table keyed with the id is used as it is and the documented re-key keeps every row",
          "[sink][sqlite][schema][migration]") {
  test::temp_dir dir;
  const auto db = dir / "sink.db";
  test::sqlite_exec(db, std::string(keyed_by_id) +
               "INSERT INTO weir_records VALUES(0, 0, 4, 1, 'id-shard_00/seg_00000004.wab-1', "
               "'shard_00/seg_00000004.wab', 42, 'kept1');");
  {
    auto sink = sqlite_factory_at(db)->make();
    REQUIRE(sink->commit({record(0, 4, 1, "kept1"), record(0, 4, 2, "kept2")}).kind ==
            commit_result::outcome::committed);
  }
  CHECK(sqlite_key(db) == "node,shard,seq,idx,id");
  REQUIRE(rows(db).size() == 2);

  const auto rekey = documented_sql("<!-- sqlite: re-key a table keyed with the id -->");
  REQUIRE(rekey.find("PRIMARY KEY (node, shard, seq, idx, ts)") != std::string::npos);
  test::sqlite_exec(db, rekey);
  CHECK(sqlite_key(db) == "node,shard,seq,idx,ts");
  // Every row kept, in arrival order; a redelivery is still recognised.
  auto sink = sqlite_factory_at(db)->make();
  REQUIRE(sink->commit({record(0, 4, 2, "kept2"), record(0, 4, 3, "new")}).kind == commit_result::outcome::committed);
  const auto got = rows(db);
  REQUIRE(got.size() == 3);
  CHECK(got[0] == "0/4/1 id-shard_00/seg_00000004.wab-1 kept1");
  CHECK(got[1] == "0/4/2 id-shard_00/seg_00000004.wab-2 kept2");
  CHECK(got[2] == "0/4/3 id-shard_00/seg_00000004.wab-3 new");
}

namespace {

std::shared_ptr<sink_factory> postgres_factory_for(const test::postgres_server& pg) {
  config_sources src;
  src.file_required = false;
  src.overrides = {"sink.type=postgres", "sink.postgres.conninfo=" + pg.conninfo()};
  return make_sink_factory(load_config(src));
}

}  // namespace

TEST_CASE("postgres: the coordinate key keeps one row per record and a first-schema table moves to it",
          "[sink][postgres][schema][migration]") {
  test::postgres_server pg;
  pg.psql(
      "CREATE TABLE weir_records(id TEXT PRIMARY KEY, shard INTEGER, segment TEXT, idx BIGINT, ts BIGINT, "
      "payload BYTEA);"
      "INSERT INTO weir_records VALUES('id-shard_00/seg_00000007.wab-1', 0, 'shard_00/seg_00000007.wab', 1, 5, "
      "'old1');"
      "INSERT INTO weir_records VALUES('id-shard_01/seg_00012345.wab-9', 1, 'shard_01/seg_00012345.wab', 9, 6, "
      "'old2');");
  auto factory = postgres_factory_for(pg);
  // Two commit slots connect at once (each connects on its first commit): one
  // moves the table under the advisory lock, the other waits for it.
  auto a = factory->make();
  auto b = factory->make();
  commit_result ra, rb;
  std::thread ta([&] { ra = a->commit({record(0, 7, 1, "old1"), record(0, 8, 1, "new")}); });
  std::thread tb([&] { rb = b->commit({record(1, 12345, 9, "old2"), record(0, 8, 2, "newer")}); });
  ta.join();
  tb.join();
  INFO(ra.error << " / " << rb.error);
  REQUIRE(ra.kind == commit_result::outcome::committed);
  REQUIRE(rb.kind == commit_result::outcome::committed);
  REQUIRE(a->commit({record(0, 8, 1, "new")}).kind == commit_result::outcome::committed);
  CHECK(pg.psql("SELECT string_agg(shard || '/' || seq || '/' || idx || ' ' || encode(payload, 'escape'), ', ' "
                "ORDER BY shard, seq, idx) FROM weir_records") ==
        "0/7/1 old1, 0/8/1 new, 0/8/2 newer, 1/12345/9 old2\n");
  CHECK(pg.psql("SELECT string_agg(a.attname, ',' ORDER BY array_position(i.indkey::int2[], a.attnum)) "
                "FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) "
                "WHERE i.indrelid = 'weir_records'::regclass AND i.indisprimary") == "node,shard,seq,idx,id\n");
}

TEST_CASE("postgres: the binary COPY stream of a batch is the PostgreSQL format byte for byte", "[sink][postgres]") {
  // Spelled out from the format's description: signature, flags, header
  // extension, then per row a field count and each field as a big-endian
  // length and its bytes, then a field count of -1.
  std::vector<sink_record> batch(2);
  batch[0] = {"ab", 1, 2, "s/seg", 0x0102030405060708ull, 9, -2, byte_buffer{0xff, 0x00}};
  batch[1] = {"", 0, 65535, "", 0, 0, 0, byte_buffer{}};
  std::string expected("PGCOPY\n\377\r\n\0", 11);
  expected += std::string(8, '\0');
  auto be = [&](std::uint64_t v, int bytes) {
    for (int shift = 8 * (bytes - 1); shift >= 0; shift -= 8) expected.push_back(static_cast<char>((v >> shift) & 0xff));
  };
  auto field = [&](const std::string& bytes) {
    be(bytes.size(), 4);
    expected += bytes;
  };
  for (const auto& r : batch) {
    be(8, 2);
    be(4, 4), be(r.node, 4);
    be(4, 4), be(r.shard, 4);
    be(8, 4), be(r.sequence, 8);
    be(8, 4), be(r.index, 8);
    field(r.id);
    field(r.segment);
    be(8, 4), be(static_cast<std::uint64_t>(r.ts_ns), 8);
    field(std::string(r.payload.begin(), r.payload.end()));
  }
  be(0xffff, 2);
  std::string out = "left over from an earlier batch";
  encode_copy_rows(batch, out);
  CHECK(out.size() == expected.size());
  CHECK(out == expected);
}

TEST_CASE("postgres: a fresh table is keyed by the coordinate", "[sink][postgres][schema]") {
  test::postgres_server pg;
  auto sink = postgres_factory_for(pg)->make();
  REQUIRE(sink->commit({record(0, 1, 1, "a"), record(0, 1, 1, "a"), record(0, 2, 1, "b")}).kind ==
          commit_result::outcome::committed);
  CHECK(pg.psql("SELECT count(*) FROM weir_records") == "2\n");
  // Another record at a used coordinate (a wiped data_dir) is kept, not taken for a redelivery.
  REQUIRE(sink->commit({record(0, 1, 1, "other", "-again")}).kind == commit_result::outcome::committed);
  CHECK(pg.psql("SELECT count(*) FROM weir_records") == "3\n");
  CHECK(pg.psql("SELECT count(*) FROM information_schema.columns WHERE table_name = 'weir_records' "
                "AND column_name IN ('node', 'seq', 'id')") == "3\n");
}

TEST_CASE("postgres: a batch goes in with one binary COPY with every field intact and a redelivery takes INSERT ON CONFLICT",
          "[sink][postgres][copy]") {
  test::postgres_server pg;
  pg.psql("ALTER SYSTEM SET log_statement = 'all'");
  pg.psql("SELECT pg_reload_conf()");
  auto sink = postgres_factory_for(pg)->make();

  // Values that need every byte of their binary fields: a shard above 255,
  // sequence and index above 2^32, a negative time, a payload of every byte
  // value and an empty one.
  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte.push_back(static_cast<char>(b));
  std::vector<sink_record> batch{record(300, 5'000'000'000ull, 7'000'000'001ull, every_byte), record(1, 2, 3, "")};
  batch[0].ts_ns = -1234567890123;
  batch[1].ts_ns = 9'000'000'000'000'000'000;
  REQUIRE(sink->commit(batch).kind == commit_result::outcome::committed);
  CHECK(pg.psql("SELECT string_agg(node || '/' || shard || '/' || seq || '/' || idx || ' ' || id || ' ' || segment || "
                "' ' || ts || ' ' || md5(payload) || ' ' || length(payload), E'\\n' ORDER BY shard DESC) "
                "FROM weir_records") ==
        "0/300/5000000000/7000000001 " + batch[0].id + " " + batch[0].segment + " -1234567890123 " +
            "e2c865db4162bed963bfaa9ef6ac18f0 256\n" + "0/1/2/3 " + batch[1].id + " " + batch[1].segment +
            " 9000000000000000000 d41d8cd98f00b204e9800998ecf8427e 0\n");
  const auto first = pg.server_log();
  CHECK(first.find("COPY weir_records") != std::string::npos);
  CHECK(first.find("INSERT INTO weir_records") == std::string::npos);

  // A redelivery overlapping what is stored (a crash after the commit, before
  // the cursor moved): COPY refuses the duplicate, the INSERT skips it.
  REQUIRE(sink->commit({record(1, 2, 3, ""), record(1, 2, 4, "after")}).kind == commit_result::outcome::committed);
  CHECK(pg.psql("SELECT count(*) FROM weir_records") == "3\n");
  CHECK(pg.psql("SELECT encode(payload, 'escape') FROM weir_records WHERE idx = 4") == "after\n");
  CHECK(pg.server_log().find("INSERT INTO weir_records") != std::string::npos);
}

TEST_CASE("sqlite: a database a crash left with a hot journal passes the start's check and is rolled back",
          "[sink][sqlite]") {
  test::temp_dir dir;
  const auto db = dir / "sink.db";
  {
    auto sink = sqlite_factory_at(db)->make();
    REQUIRE(sink->commit({record(0, 1, 1, "kept")}).kind == commit_result::outcome::committed);
  }
  // A writer dies inside a transaction whose pages spilled to the database
  // file: its rollback journal is hot.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    sqlite3* c = nullptr;
    sqlite3_open(db.c_str(), &c);
    sqlite3_exec(c, "PRAGMA journal_mode=DELETE; PRAGMA cache_size=1; BEGIN; CREATE TABLE filler(x BLOB);", nullptr,
                 nullptr, nullptr);
    for (int i = 0; i < 200; ++i)
      sqlite3_exec(c, "INSERT INTO filler VALUES (randomblob(4000))", nullptr, nullptr, nullptr);
    ::_exit(0);  // no COMMIT, no ROLLBACK, no close
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(std::filesystem::exists(dir / "sink.db-journal"));
  REQUIRE(std::filesystem::file_size(dir / "sink.db-journal") > 0);

  std::shared_ptr<sink_factory> factory;
  REQUIRE_NOTHROW(factory = sqlite_factory_at(db));
  auto sink = factory->make();
  REQUIRE(sink->commit({record(0, 1, 2, "after the crash")}).kind == commit_result::outcome::committed);
  CHECK(rows(db).size() == 2);
  test::sqlite_exec(db, "CREATE TABLE filler(x BLOB)");  // the dead writer's table was rolled back
}

TEST_CASE("sqlite: the start's check passes a torn first write beside its journal and a URI file name",
          "[sink][sqlite]") {
  test::temp_dir dir;
  const auto db = dir / "torn.db";
  std::ofstream(db) << std::string(512, '\0');  // page 1 torn to zeros by a crash
  CHECK_THROWS(sqlite_factory_at(db));         // alone: no database
  std::ofstream(dir / "torn.db-journal") << "the journal that will undo it";
  CHECK_NOTHROW(sqlite_factory_at(db));
  CHECK_NOTHROW(sqlite_factory_at("file:" + (dir / "uri.db").string()));
}
