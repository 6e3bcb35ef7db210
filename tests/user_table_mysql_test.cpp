// A table of the user's in a real MariaDB: typed rows from the payload,
// once by record id across redeliveries and a kill -9; what the payload or
// the table refuses is a dead letter with the server's error (a clash on
// another unique key of the table included); a table without what the
// mapping needs stops the start with one line; a table changed under a
// running sink is retried, not dead-lettered. And weir_records with
// payload_as: text.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sinks/sink.hpp"
#include "support/kill_and_redeliver.hpp"
#include "support/mariadb_server.hpp"
#include "support/sink_records.hpp"
#include "support/test_paths.hpp"
#include "support/user_tables.hpp"

using namespace weir;
using namespace weir::test;

namespace {

const std::vector<std::string> events_keys = test::events_mapping_keys("mysql");

std::shared_ptr<sink_factory> mysql_factory(const mariadb_server& db, const std::vector<std::string>& more) {
  return sink_factory_of(db.sink_args(), more);
}


/// A query's rows, each as its values joined by "|".
std::vector<std::string> lines(const mariadb_server& db, const std::string& sql) {
  std::vector<std::string> out;
  for (const auto& row : db.rows(sql)) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) line += (c ? "|" : "") + row[c];
    out.push_back(line);
  }
  return out;
}

}  // namespace

TEST_CASE("mysql: a table of the user's gets typed rows once by id and what it refuses is a dead letter",
          "[sink][mysql][mapping]") {
  mariadb_server db;
  db.execute("CREATE TABLE users(id BIGINT PRIMARY KEY) ENGINE=InnoDB");
  db.execute("INSERT INTO users VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9)");
  db.execute("CREATE TABLE events(weir_id CHAR(64) NOT NULL PRIMARY KEY, user_id BIGINT NOT NULL, kind VARCHAR(40), "
             "at DATETIME NOT NULL, seen BIGINT AUTO_INCREMENT UNIQUE, UNIQUE KEY one_login (user_id, at), "
             "FOREIGN KEY (user_id) REFERENCES users(id)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4");
  db.execute("CREATE TRIGGER no_forbidden BEFORE INSERT ON events FOR EACH ROW "
             "IF NEW.kind = 'forbidden' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'forbidden kind'; END IF");
  auto sink = mysql_factory(db, events_keys)->make();
  std::vector<sink_record> batch{
      record_of(event(1, R"("lögin")", "2026-12-07 10:00:00"), 0),
      record_of("not json", 1),
      record_of(event(2, R"("x")", "not a time"), 2),                        // the column's type refuses it
      record_of(event(3, R"("quote ' and back\\slash")", "2026-12-07 10:00:03"), 3),
      record_of(R"({"user": null, "event": {"kind": "k"}, "ts": "2026-12-07 10:00:04"})", 4),  // NOT NULL
      record_of(event(99, R"("k")", "2026-12-07 10:00:05"), 5),             // no user 99: the foreign key
      record_of(event(6, R"("forbidden")", "2026-12-07 10:00:06"), 6),      // the trigger
      record_of(event(1, R"("again")", "2026-12-07 10:00:00"), 7),          // another record on one_login
      record_of(event(8, R"("far too long for the kind column, forty characters")", "2026-12-07 10:00:08"), 8),
      record_of(event(9, R"({"deep": [1, 2]})", "2026-12-07 10:00:09"), 9),
  };
  auto r = sink->commit(batch);
  REQUIRE(r.kind == commit_result::outcome::committed);
  std::vector<std::size_t> refused;
  for (const auto& [at, why] : r.rejected) refused.push_back(at);
  CHECK(refused == std::vector<std::size_t>{1, 2, 4, 5, 6, 7, 8});
  REQUIRE(r.rejected.size() == 7);
  CHECK(r.rejected[0].second == "the payload is not JSON (events takes its columns from a JSON object)");
  CHECK(r.rejected[1].second.rfind("mysql error 1292 ", 0) == 0);
  CHECK(r.rejected[2].second.rfind("mysql error 1048 ", 0) == 0);
  CHECK(r.rejected[3].second.rfind("mysql error 1452 ", 0) == 0);
  CHECK(r.rejected[4].second == "mysql error 1644 (45000): forbidden kind");
  CHECK(r.rejected[5].second == "mysql error 1048 (23000): Column 'weir_id' cannot be null");  // not silently dropped
  CHECK(r.rejected[6].second.rfind("mysql error 1406 ", 0) == 0);
  CHECK(lines(db, "SELECT weir_id, user_id, kind, at FROM events ORDER BY user_id") ==
        std::vector<std::string>{batch[0].id + "|1|lögin|2026-12-07 10:00:00",
                                 batch[3].id + "|3|quote ' and back\\slash|2026-12-07 10:00:03",
                                 batch[9].id + "|9|{\"deep\": [1, 2]}|2026-12-07 10:00:09"});

  // Delivered again (a crash before the cursor was stored): nothing changes,
  // in bulk and row by row alike.
  r = sink->commit({batch[0], batch[3], batch[9]});
  CHECK(r.kind == commit_result::outcome::committed);
  CHECK(r.rejected.empty());
  r = sink->commit(batch);
  CHECK(r.rejected.size() == 7);
  CHECK(lines(db, "SELECT count(*), count(DISTINCT weir_id) FROM events") == std::vector<std::string>{"3|3"});
}

TEST_CASE("mysql: a table of the user's without what the mapping needs stops the start with one line",
          "[sink][mysql][mapping]") {
  mariadb_server db;
  for (const std::string ddl : {
           "plain(weir_id CHAR(64) NOT NULL, user_id INT, kind TEXT, at TEXT)",
           "indexed(weir_id VARCHAR(64) NOT NULL, user_id INT, kind TEXT, at TEXT, UNIQUE KEY (weir_id))",
           "prefixed(weir_id VARCHAR(64) NOT NULL, user_id INT, kind TEXT, at TEXT, UNIQUE KEY (weir_id(10)))",
           "pair(weir_id CHAR(64) NOT NULL, user_id INT, kind TEXT, at TEXT, UNIQUE KEY (weir_id, user_id))",
           "nullable(weir_id CHAR(64), user_id INT, kind TEXT, at TEXT, UNIQUE KEY (weir_id))",
           "narrow(weir_id CHAR(64) PRIMARY KEY, user_id INT)",
           "int_key(weir_id BIGINT PRIMARY KEY, user_id INT, kind TEXT, at TEXT)",
           "short_key(weir_id VARCHAR(32) PRIMARY KEY, user_id INT, kind TEXT, at TEXT)",
           "generated(weir_id CHAR(64) PRIMARY KEY, user_id INT, kind TEXT, at TEXT AS (kind) VIRTUAL)",
           "strict(weir_id CHAR(64) PRIMARY KEY, user_id INT, kind TEXT, at TEXT, owner TEXT NOT NULL)",
           "lenient(weir_id CHAR(64) PRIMARY KEY, user_id INT, kind TEXT, at TEXT, owner VARCHAR(9) NOT NULL "
           "DEFAULT 'weir', n BIGINT NOT NULL AUTO_INCREMENT UNIQUE)",
           "Cased(WEIR_ID CHAR(64) PRIMARY KEY, User_Id INT, KIND TEXT, At TEXT)"})
    db.execute("CREATE TABLE " + ddl + " ENGINE=InnoDB");
  db.execute("CREATE VIEW a_view AS SELECT * FROM indexed");
  auto refusal = [&](const std::string& table) {
    return refusal_of([&] { mysql_factory(db, {"sink.mysql.table=" + table, events_keys[1]}); });
  };
  for (const std::string t : {"indexed", "lenient", "weir.indexed", "Cased", "cased"}) {
    INFO(t);
    CHECK(refusal(t) == "accepted");
  }
  CHECK(refusal("missing") ==
        "sink.mysql.table = missing: no such table in the database (weir fills a table of yours; create it first)");
  CHECK(refusal("narrow") == "sink.mysql.table = narrow: it has no column at (its columns: weir_id, user_id)");
  for (const std::string t : {"plain", "prefixed", "pair"}) {
    INFO(t);
    CHECK(refusal(t) == "sink.mysql.table = " + t +
                            ": column weir_id is not unique on its own (make it the primary key or give it a unique "
                            "index of its own, over its whole length): a record delivered again would be a second row");
  }
  CHECK(refusal("nullable").find("column weir_id may be NULL: declare it NOT NULL") != std::string::npos);
  CHECK(refusal("int_key") == "sink.mysql.table = int_key: column weir_id is bigint(20), which cannot hold a record "
                              "id (64 characters): make it char(64), varchar(64) or longer");
  CHECK(refusal("short_key").find("column weir_id is varchar(32), which cannot hold") != std::string::npos);
  CHECK(refusal("generated") == "sink.mysql.table = generated: column at is generated: it takes no value");
  CHECK(refusal("strict") == "sink.mysql.table = strict: column owner is NOT NULL without a default and not mapped: "
                             "every row would be refused (map it in columns or give it a default)");
  CHECK(refusal("a_view") == "sink.mysql.table = a_view: it is not a table (a view or another kind of relation)");
}

TEST_CASE("mysql: a table of the user's changed under the sink is retried and never dead-lettered",
          "[sink][mysql][mapping]") {
  mariadb_server db;
  db.execute("CREATE TABLE events(weir_id CHAR(64) PRIMARY KEY, user_id INT, kind TEXT, at TEXT) ENGINE=InnoDB");
  auto sink = mysql_factory(db, events_keys)->make();
  const std::vector<sink_record> batch{record_of(event(1, R"("a")", "t1"), 0), record_of(event(2, R"("b")", "t2"), 1)};
  REQUIRE(sink->commit({batch[0]}).kind == commit_result::outcome::committed);

  db.execute("ALTER TABLE events DROP COLUMN kind");
  auto r = sink->commit(batch);
  CHECK(r.kind == commit_result::outcome::transient);
  CHECK(r.rejected.empty());
  CHECK(r.error.rfind("mysql error 1054 ", 0) == 0);  // unknown column
  // The next connection looks at the table again and says what is missing.
  r = sink->commit(batch);
  CHECK(r.kind == commit_result::outcome::transient);
  CHECK(r.error == "mysql: sink.mysql.table = events: it has no column kind (its columns: weir_id, user_id, at)");

  db.execute("ALTER TABLE events ADD COLUMN kind TEXT");
  r = sink->commit(batch);
  CHECK(r.kind == commit_result::outcome::committed);
  CHECK(r.rejected.empty());
  CHECK(lines(db, "SELECT user_id, coalesce(kind, 'NULL') FROM events ORDER BY user_id") ==
        std::vector<std::string>{"1|NULL", "2|b"});
}

TEST_CASE("mysql: payload_as text stores UTF-8 payloads as text and dead-letters the rest", "[sink][mysql]") {
  mariadb_server db;
  auto sink = mysql_factory(db, {"sink.mysql.payload_as=text"})->make();
  const std::vector<sink_record> batch{record_of("héllo", 0), record_of(std::string("\xff\xfe", 2), 1),
                                       record_of("x", 2)};
  auto r = sink->commit(batch);
  REQUIRE(r.kind == commit_result::outcome::committed);
  REQUIRE(r.rejected.size() == 1);
  CHECK(r.rejected[0] == std::pair<std::size_t, std::string>{
                             1, "the payload is not UTF-8 text (sink.mysql.payload_as is text)"});
  CHECK(lines(db, "SELECT payload, DATA_TYPE FROM weir_records, information_schema.COLUMNS WHERE payload LIKE 'h%' "
                  "AND TABLE_NAME = 'weir_records' AND COLUMN_NAME = 'payload'") ==
        std::vector<std::string>{"héllo|longtext"});
  CHECK(db.scalar("SELECT count(*) FROM weir_records") == "2");

  // A table whose payload column disagrees is said, not written into.
  auto as_bytes = mysql_factory(db, {})->make();
  r = as_bytes->commit({record_of("y", 4)});
  CHECK(r.kind == commit_result::outcome::transient);
  CHECK(r.error.find("weir_records.payload is longtext, but sink.mysql.payload_as is bytes") != std::string::npos);
}

TEST_CASE("mysql: every acked record reaches a table of the user's once across a kill -9",
          "[live][sink][mysql][mapping]") {
  mariadb_server db;
  db.execute("CREATE TABLE events(weir_id CHAR(64) PRIMARY KEY, user_id BIGINT NOT NULL, kind TEXT, "
             "at DATETIME NOT NULL) ENGINE=InnoDB");
  temp_dir dir;
  auto args = db.sink_args();
  args.insert(args.end(), {"--set", events_keys[0], "--set", events_keys[1]});
  constexpr int records = 300;
  kill_and_redeliver(
      dir.path(), args, records, [](int i) { return event(i, R"("k")", "2026-12-07 10:00:00"); },
      [&] { return std::stoul(db.scalar("SELECT count(*) FROM events")); });
  CHECK(lines(db, "SELECT count(*), count(DISTINCT weir_id), min(user_id), max(user_id) FROM events") ==
        std::vector<std::string>{"300|300|0|299"});
}
