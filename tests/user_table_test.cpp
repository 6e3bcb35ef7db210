// A table of the user's: each record a row whose columns come from its JSON
// payload, the record id in a unique column so a redelivery changes nothing;
// what the payload or the table refuses is a dead letter with the reason;
// a table that lacks what the mapping needs stops the start with one line.
// And weir_records with payload_as: text.
#include <sqlite3.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "config/loader.hpp"
#include "sinks/row_mapping.hpp"
#include "sinks/sink.hpp"
#include "support/kill_and_redeliver.hpp"
#include "support/test_helpers.hpp"
#include "support/sink_contents.hpp"
#include "support/sink_records.hpp"
#include "support/test_paths.hpp"

using namespace weir;
using namespace weir::test;

namespace {

table_mapping events_mapping(missing_field missing = missing_field::error) {
  table_mapping m;
  m.table = "events";
  m.columns = {{"user_id", "/user"}, {"kind", "/event/kind"}, {"at", "/ts"}};
  m.missing = missing;
  return m;
}


/// Every row of `sql`'s result, its columns joined by "|" (NULL as "NULL").
std::vector<std::string> query(const std::filesystem::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);  // a table in rollback-journal mode is locked while the sink commits
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
  std::vector<std::string> out;
  while (sqlite3_step(st) == SQLITE_ROW) {
    std::string row;
    for (int c = 0; c < sqlite3_column_count(st); ++c) {
      const auto* t = sqlite3_column_text(st, c);
      if (c) row += '|';
      row += t ? reinterpret_cast<const char*>(t) : "NULL";
    }
    out.push_back(row);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

std::shared_ptr<sink_factory> sqlite_factory(const std::filesystem::path& db, std::vector<std::string> more) {
  config_sources src;
  src.file_required = false;
  src.overrides = {"sink.type=sqlite", "sink.sqlite.path=" + db.string()};
  src.overrides.insert(src.overrides.end(), more.begin(), more.end());
  return make_sink_factory(load_config(src));
}

const std::vector<std::string> events_keys{"sink.sqlite.table=events",
                                           "sink.sqlite.columns={user_id: /user, kind: /event/kind, at: /ts}"};

}  // namespace

TEST_CASE("a mapping takes each column from the payload by its JSON pointer and as text", "[sink][mapping]") {
  const row_mapping m(events_mapping());
  CHECK(m.columns() == std::vector<std::string>{"weir_id", "at", "kind", "user_id"});
  std::vector<std::optional<std::string>> row;
  CHECK(m.values(record_of(R"({"user": 7, "event": {"kind": "login"}, "ts": "2026-12-07T10:00:00Z"})", 1), row).empty());
  REQUIRE(row.size() == 4);
  CHECK(row[0] == record_of("", 1).id);
  CHECK(row[1] == "2026-12-07T10:00:00Z");
  CHECK(row[2] == "login");
  CHECK(row[3] == "7");
  // Anything not a string goes as its JSON; JSON null is NULL.
  CHECK(m.values(record_of(R"({"user": null, "event": {"kind": [1, {"a": true}]}, "ts": 1.5})", 2), row).empty());
  CHECK(row[1] == "1.5");
  CHECK(row[2] == R"([1, {"a": true}])");  // as the payload spells it
  CHECK_FALSE(row[3]);

  CHECK(m.values(record_of("not json", 3), row) == "the payload is not JSON (events takes its columns from a JSON object)");
  CHECK(m.values(record_of("[1, 2]", 4), row) == "the payload is JSON but not an object (events takes its columns from one)");
  CHECK(m.values(record_of(R"({"user": 1, "ts": "t"})", 5), row) == "the payload has no /event/kind for column kind");
  CHECK(m.values(record_of(R"({"user": 1, "event": "flat", "ts": "t"})", 6), row) ==
        "the payload has no /event/kind for column kind");

  const row_mapping lenient(events_mapping(missing_field::null));
  CHECK(lenient.values(record_of(R"({"user": 1})", 7), row).empty());
  CHECK(row == std::vector<std::optional<std::string>>{record_of("", 7).id, std::nullopt, std::nullopt, "1"});
  CHECK(quoted_sql_name("app.events") == "\"app\".\"events\"");
}

TEST_CASE("a mapping takes each value as the payload spells it", "[sink][mapping]") {
  table_mapping t;
  t.table = "t";
  t.columns = {{"big", "/big"},     {"exp", "/exp"},     {"obj", "/obj"},    {"escaped", "/a~1b~0c"},
               {"second", "/xs/1"}, {"repeated", "/dup"}, {"spelled", "/key"}, {"deep", "/deep/0/0"}};
  const row_mapping m(t);
  // columns() is the id, then the columns by name.
  CHECK(m.columns() == std::vector<std::string>{"weir_id", "big", "deep", "escaped", "exp", "obj", "repeated",
                                                "second", "spelled"});
  const std::string nested = std::string(100000, '[') + std::string(100000, ']');
  std::vector<std::optional<std::string>> row;
  const auto why = m.values(
      record_of(R"({"big": 123456789012345678901234567890.000000000000000001, "exp": 1e300, )"
                R"("obj": {"z": 1,  "a": [true, null]}, "a/b~c": "\u00e9\n", "xs": [10, 20.50, 30], "dup": 1, )"
                R"("dup": "last", "k\u0065y": "found by its unescaped name", "skip": )" + nested +
                    R"(, "deep": [[ -0.0e+0 ]]})",
                1),
      row);
  INFO(why);
  REQUIRE(why.empty());
  REQUIRE(row.size() == 9);
  CHECK(row[1] == "123456789012345678901234567890.000000000000000001");  // no trip through a double
  CHECK(row[2] == "-0.0e+0");
  CHECK(row[3] == "\xc3\xa9\n");  // a string's escapes undone
  CHECK(row[4] == "1e300");
  CHECK(row[5] == R"({"z": 1,  "a": [true, null]})");  // keys in their order, spacing kept
  CHECK(row[6] == "last");                             // as JSON parsers keep repeated keys
  CHECK(row[7] == "20.50");
  CHECK(row[8] == "found by its unescaped name");
  // A pointer into a value of another kind, or past an array's end, finds nothing.
  table_mapping wrong = t;
  wrong.columns = {{"a", "/xs/3"}, {"b", "/xs/01"}, {"c", "/big/x"}, {"d", "/obj/a/-"}};
  wrong.missing = missing_field::null;
  REQUIRE(row_mapping(wrong).values(record_of(R"({"xs": [1, 2, 3], "big": 1, "obj": {"a": []}})", 2), row).empty());
  CHECK(row == std::vector<std::optional<std::string>>{record_of("", 2).id, std::nullopt, std::nullopt, std::nullopt,
                                                       std::nullopt});
  CHECK(m.values(record_of("  [1]", 3), row) == "the payload is JSON but not an object (t takes its columns from one)");
  // A UTF-8 byte order mark before the object, as JSON parsers allow.
  CHECK(m.values(record_of("\xEF\xBB\xBF" R"({"big": 7})", 6), row) ==
        "the payload has no /deep/0/0 for column deep");
  CHECK(m.values(record_of(R"({"big": 1,})", 4), row) == "the payload is not JSON (t takes its columns from a JSON object)");
  // The one number JSON parsers refuse: one out of a double's range.
  CHECK(m.values(record_of(R"({"big": 1e400})", 5), row) == "the payload is not JSON (t takes its columns from a JSON object)");
}

TEST_CASE("a mapping that names one column twice is refused with one line", "[config][mapping]") {
  auto refusal = [](const std::string& columns) {
    config_sources src;
    src.file_required = false;
    src.overrides = {"sink.type=postgres", "sink.postgres.conninfo=host=/nowhere", "sink.postgres.table=events",
                     "sink.postgres.columns=" + columns};
    return refusal_of([&] { load_config(src); });
  };
  CHECK(refusal("{user_id: /user, kind: /kind}") == "accepted");
  CHECK(refusal("{user_id: /user, USER_ID: /u}") ==
        "config error: sink.postgres.columns: USER_ID and user_id name one column (names match whatever their case); "
        "map it once (sink.postgres.columns from --set)");
  CHECK(refusal("{k: /k, WEIR_ID: /x}").rfind(
            "config error: sink.postgres.columns: WEIR_ID is sink.postgres.id_column, which gets the record id; map "
            "the payload to other columns (",
            0) == 0);
}

TEST_CASE("sqlite: a table of the user's gets typed rows once by id and what it refuses is a dead letter",
          "[sink][sqlite][mapping]") {
  temp_dir dir;
  const auto db = dir / "app.db";
  sqlite_exec(db, "CREATE TABLE events(weir_id TEXT PRIMARY KEY, user_id INTEGER NOT NULL, kind TEXT, at TEXT NOT NULL)");
  auto factory = sqlite_factory(db, events_keys);
  auto sink = factory->make();
  std::vector<sink_record> batch{
      record_of(R"({"user": "7", "event": {"kind": "login"}, "ts": "t1"})", 0),
      record_of("not json", 1),
      record_of(R"({"user": null, "event": {"kind": "x"}, "ts": "t2"})", 2),  // NOT NULL: the table refuses it
      record_of(R"({"user": 8, "event": {"kind": {"deep": 1}}, "ts": "t3"})", 3),
      record_of(R"({"user": 9, "event": {}, "ts": "t4"})", 4),
  };
  auto r = sink->commit(batch);
  REQUIRE(r.kind == commit_result::outcome::committed);
  REQUIRE(r.rejected.size() == 3);
  CHECK(r.rejected[0].first == 1);
  CHECK(r.rejected[0].second.find("not JSON") != std::string::npos);
  CHECK(r.rejected[1].first == 2);
  CHECK(r.rejected[1].second == "sqlite refused the row: NOT NULL constraint failed: events.user_id");
  CHECK(r.rejected[2].first == 4);
  CHECK(r.rejected[2].second == "the payload has no /event/kind for column kind");
  const auto rows = query(db, "SELECT weir_id, user_id, typeof(user_id), kind, at FROM events ORDER BY at");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0] == batch[0].id + "|7|integer|login|t1");  // "7" cast by the column's type
  CHECK(rows[1] == batch[3].id + "|8|integer|{\"deep\": 1}|t3");
  // Delivered again (a crash before the cursor was stored): nothing changes.
  r = sink->commit(batch);
  CHECK(r.kind == commit_result::outcome::committed);
  CHECK(query(db, "SELECT count(*) FROM events") == std::vector<std::string>{"2"});
}

TEST_CASE("sqlite: a table of the user's without what the mapping needs stops the start with one line",
          "[sink][sqlite][mapping]") {
  temp_dir dir;
  const auto db = dir / "app.db";
  sqlite_exec(db, "CREATE TABLE plain(weir_id TEXT, user_id INTEGER, kind TEXT, at TEXT);"
           "CREATE TABLE indexed(weir_id TEXT, user_id INTEGER, kind TEXT, at TEXT);"
           "CREATE UNIQUE INDEX indexed_id ON indexed(weir_id);"
           "CREATE TABLE partial(weir_id TEXT, user_id INTEGER, kind TEXT, at TEXT);"
           "CREATE UNIQUE INDEX partial_id ON partial(weir_id) WHERE user_id > 0;"
           "CREATE TABLE narrow(weir_id TEXT PRIMARY KEY, user_id INTEGER);"
           "CREATE TABLE rowid_key(weir_id INTEGER PRIMARY KEY, user_id INTEGER, kind TEXT, at TEXT);"
           "CREATE TABLE generated(weir_id TEXT PRIMARY KEY, user_id INTEGER, kind TEXT, at TEXT AS (kind));"
           "CREATE TABLE Cased(WEIR_ID TEXT PRIMARY KEY, User_Id INTEGER, KIND TEXT, At TEXT)");
  auto refusal = [&](const std::string& table) {
    return refusal_of([&] { sqlite_factory(db, {"sink.sqlite.table=" + table, events_keys[1]}); });
  };
  CHECK(refusal("indexed") == "accepted");
  CHECK(refusal("missing") == "sink.sqlite.table = missing: no table missing in the database (weir fills a table of "
                              "yours; create it first) (in " + db.string() + ")");
  CHECK(refusal("narrow") == "sink.sqlite.table = narrow: table narrow has no column at (its columns: weir_id, "
                             "user_id) (in " + db.string() + ")");
  for (const std::string t : {"plain", "partial"}) {
    INFO(t);
    CHECK(refusal(t).find("column weir_id of " + t + " is not unique") != std::string::npos);
  }
  CHECK(refusal("main.indexed") == "accepted");
  CHECK(refusal("cased") == "accepted");  // SQLite's names ignore case
  CHECK(refusal("rowid_key").find("is an INTEGER PRIMARY KEY (SQLite's rowid), which cannot hold a record id") !=
        std::string::npos);
  CHECK(refusal("generated").find("column at of generated is generated: it takes no value") != std::string::npos);
}

TEST_CASE("sqlite: a row a trigger or a foreign key refuses is a dead letter and the rest of its batch goes in once",
          "[sink][sqlite][mapping]") {
  temp_dir dir;
  const auto db = dir / "app.db";
  test::sqlite_exec(db, "CREATE TABLE users(id INTEGER PRIMARY KEY);"
                        "INSERT INTO users VALUES (1), (2), (3), (4), (5), (6);"
                        "CREATE TABLE events(weir_id TEXT PRIMARY KEY, user_id INTEGER REFERENCES users(id), kind TEXT, at TEXT);"
                        "CREATE TRIGGER no_rollback BEFORE INSERT ON events WHEN new.kind = 'rollback' "
                        "BEGIN SELECT RAISE(ROLLBACK, 'rollback refused'); END;"
                        "CREATE TRIGGER no_abort BEFORE INSERT ON events WHEN new.kind = 'abort' "
                        "BEGIN SELECT RAISE(ABORT, 'abort refused'); END;");
  auto sink = sqlite_factory(db, events_keys)->make();
  std::vector<sink_record> batch;
  for (const std::string kind : {"ok", "abort", "ok", "rollback", "ok", "ok"})
    batch.push_back(record_of(R"({"user": )" + std::to_string(batch.size() + 1) + R"(, "event": {"kind": ")" + kind +
                                  R"("}, "ts": "t"})",
                              static_cast<int>(batch.size())));
  batch.push_back(record_of(R"({"user": 99, "event": {"kind": "ok"}, "ts": "t"})", 6));  // no user 99
  const auto r = sink->commit(batch);
  REQUIRE(r.kind == commit_result::outcome::committed);
  REQUIRE(r.rejected.size() == 3);
  CHECK(r.rejected[0] == std::pair<std::size_t, std::string>{1, "sqlite refused the row: abort refused"});
  CHECK(r.rejected[1] == std::pair<std::size_t, std::string>{3, "sqlite refused the row: rollback refused"});
  CHECK(r.rejected[2] == std::pair<std::size_t, std::string>{6, "sqlite refused the row: FOREIGN KEY constraint failed"});
  CHECK(query(db, "SELECT group_concat(user_id) FROM (SELECT user_id FROM events ORDER BY user_id)") ==
        std::vector<std::string>{"1,3,5,6"});
}

TEST_CASE("sqlite: a row a generated column's function or a deferred foreign key refuses is a dead letter",
          "[sink][sqlite][mapping]") {
  temp_dir dir;
  const auto db = dir / "app.db";
  test::sqlite_exec(db, "CREATE TABLE users(id INTEGER PRIMARY KEY); INSERT INTO users VALUES (1), (2);"
                        "CREATE TABLE jt(weir_id TEXT PRIMARY KEY, k TEXT, body TEXT, "
                        "usr TEXT GENERATED ALWAYS AS (json_extract(body, '$.user')) VIRTUAL);"
                        "CREATE INDEX jt_usr ON jt(usr);"
                        "CREATE TABLE fk(weir_id TEXT PRIMARY KEY, u INTEGER REFERENCES users(id) "
                        "DEFERRABLE INITIALLY DEFERRED, k TEXT)");
  auto jt = sqlite_factory(db, {"sink.sqlite.table=jt", "sink.sqlite.columns={k: /k, body: /body}"})->make();
  auto r = jt->commit({record_of(R"({"k": "good1", "body": {"user": "u1"}})", 0),
                       record_of(R"({"k": "bad", "body": "not json text"})", 1),
                       record_of(R"({"k": "good2", "body": {"user": "u2"}})", 2)});
  REQUIRE(r.kind == commit_result::outcome::committed);
  REQUIRE(r.rejected.size() == 1);
  CHECK(r.rejected[0] == std::pair<std::size_t, std::string>{1, "sqlite refused the row: malformed JSON"});
  CHECK(query(db, "SELECT group_concat(k) FROM (SELECT k FROM jt ORDER BY k)") == std::vector<std::string>{"good1,good2"});

  // A deferred foreign key fails only at COMMIT: the batch goes a row at a time.
  auto fk = sqlite_factory(db, {"sink.sqlite.table=fk", "sink.sqlite.columns={u: /u, k: /k}"})->make();
  r = fk->commit({record_of(R"({"u": 1, "k": "a"})", 3), record_of(R"({"u": 77, "k": "b"})", 4),
                  record_of(R"({"u": 2, "k": "c"})", 5)});
  REQUIRE(r.kind == commit_result::outcome::committed);
  REQUIRE(r.rejected.size() == 1);
  CHECK(r.rejected[0] == std::pair<std::size_t, std::string>{1, "sqlite refused the row: FOREIGN KEY constraint failed"});
  CHECK(query(db, "SELECT group_concat(k) FROM (SELECT k FROM fk ORDER BY k)") == std::vector<std::string>{"a,c"});

  // A table changed under the sink is no row's fault: retried, nothing dead-lettered.
  test::sqlite_exec(db, "ALTER TABLE fk RENAME COLUMN k TO kind");
  r = fk->commit({record_of(R"({"u": 1, "k": "d"})", 6)});
  CHECK(r.kind == commit_result::outcome::transient);
  CHECK(r.rejected.empty());
}

TEST_CASE("sqlite: payload_as text stores UTF-8 payloads as text and dead-letters the rest", "[sink][sqlite]") {
  temp_dir dir;
  const auto db = dir / "sink.db";
  auto sink = sqlite_factory(db, {"sink.sqlite.payload_as=text"})->make();
  std::vector<sink_record> batch{record_of("héllo", 0), record_of(std::string("\xff\xfe", 2), 1), record_of("x", 2)};
  const auto r = sink->commit(batch);
  REQUIRE(r.kind == commit_result::outcome::committed);
  REQUIRE(r.rejected.size() == 1);
  CHECK(r.rejected[0].first == 1);
  CHECK(r.rejected[0].second == "the payload is not UTF-8 text (sink.sqlite.payload_as is text)");
  CHECK(query(db, "SELECT payload, typeof(payload) FROM weir_records WHERE payload LIKE 'h%' ORDER BY idx") ==
        std::vector<std::string>{"héllo|text"});
  CHECK(query(db, "SELECT count(*) FROM weir_records") == std::vector<std::string>{"2"});
}

TEST_CASE("sqlite: every acked record reaches a table of the user's once across a kill -9",
          "[live][sink][sqlite][mapping]") {
  temp_dir dir;
  const auto db = dir / "app.db";
  sqlite_exec(db, "CREATE TABLE events(weir_id TEXT PRIMARY KEY, user_id INTEGER NOT NULL, kind TEXT, at TEXT NOT NULL)");
  constexpr int records = 300;
  kill_and_redeliver(
      dir.path(),
      {"--set", "sink.type=sqlite", "--set", "sink.sqlite.path=" + db.string(), "--set", events_keys[0], "--set",
       events_keys[1]},
      records,
      [](int i) {
        return R"({"user": )" + std::to_string(i) + R"(, "event": {"kind": "k"}, "ts": "t)" + std::to_string(i) + "\"}";
      },
      [&] { return std::stoul(query(db, "SELECT count(*) FROM events")[0]); });
  CHECK(query(db, "SELECT count(*), count(DISTINCT weir_id), min(user_id), max(user_id) FROM events") ==
        std::vector<std::string>{"300|300|0|299"});
}
