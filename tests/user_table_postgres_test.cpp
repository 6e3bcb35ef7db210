// A table of the user's in a real PostgreSQL: typed rows from the payload,
// once by record id across redeliveries and a kill -9; what the payload or
// the table refuses is a dead letter with PostgreSQL's reason; a table
// without what the mapping needs stops the start with one line; a table
// changed under a running sink is retried, not dead-lettered. And
// weir_records with payload_as: text.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sinks/sink.hpp"
#include "support/kill_and_redeliver.hpp"
#include "support/postgres_server.hpp"
#include "support/sink_records.hpp"
#include "support/test_paths.hpp"
#include "support/user_tables.hpp"

using namespace weir;
using namespace weir::test;

namespace {

const std::vector<std::string> events_keys = test::events_mapping_keys("postgres");

std::shared_ptr<sink_factory> postgres_factory(const postgres_server& pg, const std::vector<std::string>& more) {
  return sink_factory_of({"--set", "sink.type=postgres", "--set", "sink.postgres.conninfo=" + pg.conninfo()}, more);
}

}  // namespace

TEST_CASE("postgres: a table of the user's gets typed rows once by id and what it refuses is a dead letter",
          "[sink][postgres][mapping]") {
  postgres_server pg;
  pg.psql("CREATE TABLE users(id BIGINT PRIMARY KEY); INSERT INTO users SELECT generate_series(1, 9);"
          "CREATE TABLE events(weir_id TEXT PRIMARY KEY, user_id BIGINT NOT NULL REFERENCES users(id), kind TEXT, "
          "at TIMESTAMPTZ NOT NULL, seen SERIAL);"
          "CREATE FUNCTION no_forbidden() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
          "IF NEW.kind = 'forbidden' THEN RAISE EXCEPTION 'forbidden kind'; END IF; RETURN NEW; END $$;"
          "CREATE TRIGGER no_forbidden BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION no_forbidden()");
  auto sink = postgres_factory(pg, events_keys)->make();
  std::vector<sink_record> batch{
      record_of(event(1, R"("login")", "2026-12-07T10:00:00Z"), 0),
      record_of("not json", 1),
      record_of(event(2, R"("x")", "not a time"), 2),                        // the column's type refuses it
      record_of(event(3, R"("tab\there, line\nthere, back\\slash")", "2026-12-07T10:00:03Z"), 3),
      record_of(R"({"user": null, "event": {"kind": "k"}, "ts": "2026-12-07T10:00:04Z"})", 4),  // NOT NULL
      record_of(event(99, R"("k")", "2026-12-07T10:00:05Z"), 5),             // no user 99: the foreign key
      record_of(event(6, R"("forbidden")", "2026-12-07T10:00:06Z"), 6),      // the trigger
      record_of(event(7, R"("nul\u0000")", "2026-12-07T10:00:07Z"), 7),      // text cannot hold NUL
      record_of(event(8, R"({"deep": [1, 2]})", "2026-12-07T10:00:08+02:00"), 8),
  };
  auto r = sink->commit(batch);
  REQUIRE(r.kind == commit_result::outcome::committed);
  std::vector<std::size_t> refused;
  for (const auto& [at, why] : r.rejected) refused.push_back(at);
  CHECK(refused == std::vector<std::size_t>{1, 2, 4, 5, 6, 7});
  REQUIRE(r.rejected.size() == 6);
  CHECK(r.rejected[0].second == "the payload is not JSON (events takes its columns from a JSON object)");
  CHECK(r.rejected[1].second.rfind("postgres SQLSTATE 22007: ", 0) == 0);
  CHECK(r.rejected[2].second.rfind("postgres SQLSTATE 23502: ", 0) == 0);
  CHECK(r.rejected[3].second.rfind("postgres SQLSTATE 23503: ", 0) == 0);
  CHECK(r.rejected[4].second == "postgres SQLSTATE P0001: ERROR:  forbidden kind");
  CHECK(r.rejected[5].second == "the value for column kind holds a NUL character, which PostgreSQL text cannot");
  CHECK(pg.psql("SELECT weir_id, user_id, kind, at AT TIME ZONE 'UTC', pg_typeof(at) FROM events ORDER BY user_id") ==
        batch[0].id + "|1|login|2026-12-07 10:00:00|timestamp with time zone\n" +  //
        batch[3].id + "|3|tab\there, line\nthere, back\\slash|2026-12-07 10:00:03|timestamp with time zone\n" +
        batch[8].id + "|8|{\"deep\": [1, 2]}|2026-12-07 08:00:08|timestamp with time zone\n");

  // Delivered again (a crash before the cursor was stored): nothing changes,
  // in bulk and row by row alike.
  r = sink->commit({batch[0], batch[3], batch[8]});
  CHECK(r.kind == commit_result::outcome::committed);
  CHECK(r.rejected.empty());
  r = sink->commit(batch);
  CHECK(r.rejected.size() == 6);
  CHECK(pg.psql("SELECT count(*), count(DISTINCT weir_id), count(seen) FROM events") == "3|3|3\n");
}

TEST_CASE("postgres: a table of the user's without what the mapping needs stops the start with one line",
          "[sink][postgres][mapping]") {
  postgres_server pg;
  pg.psql("CREATE TABLE plain(weir_id TEXT, user_id INT, kind TEXT, at TEXT);"
          "CREATE TABLE indexed(weir_id TEXT, user_id INT, kind TEXT, at TEXT); CREATE UNIQUE INDEX ON indexed(weir_id);"
          "CREATE TABLE partial(weir_id TEXT, user_id INT, kind TEXT, at TEXT);"
          "CREATE UNIQUE INDEX ON partial(weir_id) WHERE user_id > 0;"
          "CREATE TABLE deferred(weir_id TEXT UNIQUE DEFERRABLE INITIALLY DEFERRED, user_id INT, kind TEXT, at TEXT);"
          "CREATE TABLE pair(weir_id TEXT, user_id INT, kind TEXT, at TEXT, UNIQUE (weir_id, user_id));"
          "CREATE TABLE narrow(weir_id TEXT PRIMARY KEY, user_id INT);"
          "CREATE TABLE uuid_key(weir_id UUID PRIMARY KEY, user_id INT, kind TEXT, at TEXT);"
          "CREATE TABLE short_key(weir_id VARCHAR(32) PRIMARY KEY, user_id INT, kind TEXT, at TEXT);"
          "CREATE TABLE char_key(weir_id CHAR(64) PRIMARY KEY, user_id INT, kind TEXT, at TEXT);"
          "CREATE TABLE generated(weir_id TEXT PRIMARY KEY, user_id INT, kind TEXT, "
          "at TEXT GENERATED ALWAYS AS (kind) STORED);"
          "CREATE TABLE strict(weir_id TEXT PRIMARY KEY, user_id INT, kind TEXT, at TEXT, owner TEXT NOT NULL);"
          "CREATE TABLE lenient(weir_id TEXT PRIMARY KEY, user_id INT, kind TEXT, at TEXT, "
          "owner TEXT NOT NULL DEFAULT 'weir', n BIGINT GENERATED ALWAYS AS IDENTITY);"
          "CREATE VIEW a_view AS SELECT * FROM indexed;"
          "CREATE TABLE \"Cased\"(\"WEIR_ID\" TEXT PRIMARY KEY, user_id INT, \"Kind\" TEXT, at TEXT);"
          "CREATE TABLE folded(weir_id TEXT PRIMARY KEY, user_id INT, kind TEXT, at TEXT);"
          "CREATE SCHEMA app; CREATE TABLE app.events(weir_id TEXT PRIMARY KEY, user_id INT, kind TEXT, at TEXT);"
          "CREATE TABLE identity(weir_id TEXT PRIMARY KEY, user_id INT GENERATED ALWAYS AS IDENTITY, kind TEXT, "
          "at TEXT);"
          "CREATE TABLE ruled(weir_id TEXT PRIMARY KEY, user_id INT, kind TEXT, at TEXT);"
          "CREATE RULE also_notify AS ON INSERT TO ruled DO ALSO NOTIFY ruled");
  auto refusal = [&](const std::string& table, const std::string& id = "weir_id") {
    return refusal_of([&] {
      postgres_factory(pg, {"sink.postgres.table=" + table, "sink.postgres.id_column=" + id, events_keys[1]});
    });
  };
  for (const std::string t : {"indexed", "char_key", "lenient", "app.events", "FOLDED"}) {
    INFO(t);
    CHECK(refusal(t) == "accepted");
  }
  CHECK(refusal("missing") ==
        "sink.postgres.table = missing: no such table in the database (weir fills a table of yours; create it first)");
  CHECK(refusal("narrow") == "sink.postgres.table = narrow: it has no column at (its columns: weir_id, user_id)");
  for (const std::string t : {"plain", "partial", "deferred", "pair"}) {
    INFO(t);
    CHECK(refusal(t) == "sink.postgres.table = " + t +
                            ": column weir_id is not unique on its own (make it the primary key or give it a unique "
                            "index of its own, not deferrable): a record delivered again would be a second row");
  }
  CHECK(refusal("uuid_key") == "sink.postgres.table = uuid_key: column weir_id is uuid, which cannot hold a record id "
                               "(64 hex characters): make it text, varchar(64) or char(64)");
  CHECK(refusal("short_key").find("column weir_id is character varying(32), which cannot hold") != std::string::npos);
  CHECK(refusal("generated") == "sink.postgres.table = generated: column at is generated: it takes no value");
  CHECK(refusal("strict") == "sink.postgres.table = strict: column owner is NOT NULL without a default and not "
                             "mapped: every row would be refused (map it in columns or give it a default)");
  CHECK(refusal("a_view") ==
        "sink.postgres.table = a_view: it is not a table (a view, a sequence or another kind of relation)");
  CHECK(refusal("identity") == "sink.postgres.table = identity: column user_id is GENERATED ALWAYS AS IDENTITY: it "
                               "takes no value (leave it out of columns, or make it BY DEFAULT)");
  CHECK(refusal("ruled") == "sink.postgres.table = ruled: it has a rule ON INSERT, with which PostgreSQL refuses "
                            "INSERT … ON CONFLICT (how a record delivered again is skipped): use a trigger instead");
  // Names as written, else as PostgreSQL folds unquoted ones.
  CHECK(refusal("Cased", "WEIR_ID") == "sink.postgres.table = Cased: it has no column kind (its columns: WEIR_ID, "
                                       "user_id, Kind, at)");

  // A server that does not answer yet is no reason not to start.
  pg.stop();
  CHECK(refusal("missing") == "accepted");
}

TEST_CASE("postgres: a deferred foreign key and a database not in UTF-8 refuse only their rows",
          "[sink][postgres][mapping]") {
  postgres_server pg;
  pg.psql("CREATE TABLE users(id BIGINT PRIMARY KEY); INSERT INTO users VALUES (1), (2);"
          "CREATE TABLE events(weir_id TEXT PRIMARY KEY, user_id BIGINT REFERENCES users(id) DEFERRABLE INITIALLY "
          "DEFERRED, kind TEXT, at TEXT)");
  auto sink = postgres_factory(pg, events_keys)->make();
  auto r = sink->commit({record_of(event(1, R"("a")", "t"), 0), record_of(event(77, R"("b")", "t"), 1),
                         record_of(event(2, R"("c")", "t"), 2)});
  REQUIRE(r.kind == commit_result::outcome::committed);
  REQUIRE(r.rejected.size() == 1);
  CHECK(r.rejected[0].first == 1);
  CHECK(r.rejected[0].second.rfind("postgres SQLSTATE 23503: ", 0) == 0);
  CHECK(pg.psql("SELECT string_agg(kind, ',' ORDER BY kind) FROM events") == "a,c\n");

  // LATIN1: UTF-8 values are converted, and what LATIN1 cannot hold is refused.
  pg.psql("CREATE DATABASE latin ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
  pg.psql("CREATE TABLE t(weir_id TEXT PRIMARY KEY, k TEXT)", "latin");
  auto latin = sink_factory_of({"--set", "sink.type=postgres", "--set", "sink.postgres.conninfo=" + pg.conninfo("latin")},
                               {"sink.postgres.table=t", "sink.postgres.columns={k: /k}"})
                   ->make();
  r = latin->commit({record_of(R"({"k": "\u00e9t\u00e9"})", 3), record_of(R"({"k": "\ud83d\ude00"})", 4)});
  REQUIRE(r.kind == commit_result::outcome::committed);
  REQUIRE(r.rejected.size() == 1);
  CHECK(r.rejected[0].first == 1);
  CHECK(r.rejected[0].second.rfind("postgres SQLSTATE 22P05: ", 0) == 0);  // untranslatable character
  // "été" kept: three LATIN1 bytes, the same text in UTF-8.
  CHECK(pg.psql("SELECT encode(convert_to(k, 'UTF8'), 'hex'), octet_length(k) FROM t", "latin") == "c3a974c3a9|3\n");
}

TEST_CASE("postgres: a table of the user's changed under the sink is retried and never dead-lettered",
          "[sink][postgres][mapping]") {
  postgres_server pg;
  pg.psql("CREATE TABLE events(weir_id TEXT PRIMARY KEY, user_id INT, kind TEXT, at TEXT)");
  auto sink = postgres_factory(pg, events_keys)->make();
  const std::vector<sink_record> batch{record_of(event(1, R"("a")", "t1"), 0), record_of(event(2, R"("b")", "t2"), 1)};
  REQUIRE(sink->commit({batch[0]}).kind == commit_result::outcome::committed);

  pg.psql("ALTER TABLE events DROP COLUMN kind");
  auto r = sink->commit(batch);
  CHECK(r.kind == commit_result::outcome::transient);
  CHECK(r.rejected.empty());
  INFO(r.error);
  CHECK(r.error.rfind("postgres SQLSTATE 42703: ", 0) == 0);  // undefined column
  // The next connection looks at the table again and says what is missing.
  r = sink->commit(batch);
  CHECK(r.kind == commit_result::outcome::transient);
  CHECK(r.error == "postgres: sink.postgres.table = events: it has no column kind (its columns: weir_id, user_id, at)");
  std::string why;
  CHECK(sink->probe(why) == sink_health::down);
  CHECK(why == r.error);

  pg.psql("ALTER TABLE events ADD COLUMN kind TEXT");
  r = sink->commit(batch);
  CHECK(r.kind == commit_result::outcome::committed);
  CHECK(r.rejected.empty());
  CHECK(pg.psql("SELECT user_id, coalesce(kind, 'NULL') FROM events ORDER BY user_id") == "1|NULL\n2|b\n");
}

TEST_CASE("postgres: payload_as text stores UTF-8 payloads as text and dead-letters the rest", "[sink][postgres]") {
  postgres_server pg;
  auto as_bytes = postgres_factory(pg, {})->make();  // started before the table was made
  auto sink = postgres_factory(pg, {"sink.postgres.payload_as=text"})->make();
  const std::vector<sink_record> batch{record_of("héllo", 0), record_of(std::string("\xff\xfe", 2), 1),
                                       record_of(std::string("nul\0inside", 10), 2), record_of("x", 3)};
  auto r = sink->commit(batch);
  REQUIRE(r.kind == commit_result::outcome::committed);
  REQUIRE(r.rejected.size() == 2);
  CHECK(r.rejected[0] == std::pair<std::size_t, std::string>{
                             1, "the payload is not UTF-8 text (sink.postgres.payload_as is text)"});
  CHECK(r.rejected[1] == std::pair<std::size_t, std::string>{
                             2, "the payload holds a NUL byte, which PostgreSQL text cannot (sink.postgres.payload_as "
                                "is text)"});
  CHECK(pg.psql("SELECT payload, pg_typeof(payload) FROM weir_records WHERE payload LIKE 'h%'") == "héllo|text\n");
  CHECK(pg.psql("SELECT count(*) FROM weir_records") == "2\n");

  // A table whose payload column disagrees is said, not written into: at
  // start, and by a sink that started before the table was made.
  CHECK(refusal_of([&] { postgres_factory(pg, {}); }) ==
        "sink.postgres.payload_as: weir_records.payload is text, but sink.postgres.payload_as is bytes: set "
        "payload_as to match the table, or change the column's type (ALTER TABLE weir_records ALTER payload TYPE ...)");
  r = as_bytes->commit({record_of("y", 4)});
  CHECK(r.kind == commit_result::outcome::transient);
  CHECK(r.error.find("weir_records.payload is text, but sink.postgres.payload_as is bytes") != std::string::npos);
}

TEST_CASE("postgres: every acked record reaches a table of the user's once across a kill -9",
          "[live][sink][postgres][mapping]") {
  postgres_server pg;
  pg.psql("CREATE TABLE events(weir_id TEXT PRIMARY KEY, user_id BIGINT NOT NULL, kind TEXT, at TIMESTAMPTZ NOT NULL)");
  temp_dir dir;
  constexpr int records = 300;
  kill_and_redeliver(
      dir.path(),
      {"--set", "sink.type=postgres", "--set", "sink.postgres.conninfo=" + pg.conninfo(), "--set", events_keys[0],
       "--set", events_keys[1]},
      records, [](int i) { return event(i, R"("k")", "2026-12-07T10:00:00Z"); },
      [&] { return std::stoul(pg.psql("SELECT count(*) FROM events")); });
  CHECK(pg.psql("SELECT count(*), count(DISTINCT weir_id), min(user_id), max(user_id) FROM events") == "300|300|0|299\n");
}
