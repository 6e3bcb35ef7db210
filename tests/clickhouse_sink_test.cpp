// The ClickHouse sink against a real clickhouse-server: weir_records and a
// table of the user's get every record once by id (a ReplacingMergeTree
// folds a redelivery; FINAL shows it folded), bytes kept exactly; a value
// ClickHouse cannot read as its column's type is a dead letter and the rest
// of its batch goes in; a table that cannot deduplicate stops the start with
// one line; a server down is retried; a kill -9 redelivers into one row each.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sinks/clickhouse_errors.hpp"
#include "sinks/sink.hpp"
#include "support/clickhouse_server.hpp"
#include "support/kill_and_redeliver.hpp"
#include "support/sink_records.hpp"
#include "support/test_paths.hpp"
#include "support/user_tables.hpp"

using namespace weir;
using namespace weir::test;

namespace {

const std::vector<std::string> events_keys = test::events_mapping_keys("clickhouse");

std::shared_ptr<sink_factory> clickhouse_factory(const clickhouse_server& ch, const std::vector<std::string>& more) {
  return sink_factory_of(ch.sink_args(), more);
}


const char* events_table =
    "CREATE TABLE events (weir_id String, user_id UInt64, kind String, at DateTime) "
    "ENGINE = ReplacingMergeTree ORDER BY weir_id";

}  // namespace

TEST_CASE("clickhouse: weir_records gets every record once by id with its bytes", "[sink][clickhouse]") {
  clickhouse_server ch;
  auto sink = clickhouse_factory(ch, {})->make();
  std::vector<sink_record> batch;
  for (const std::string& p : {std::string("plain"), std::string("tab\there\nnewline\\back"),
                              std::string("nul\0and\xff\xfe bytes", 16), std::string("")})
    batch.push_back(record_of(p, static_cast<int>(batch.size())));
  auto r = sink->commit(batch);
  REQUIRE(r.kind == commit_result::outcome::committed);
  CHECK(r.rejected.empty());
  r = sink->commit(batch);  // delivered again: folded by the table's key
  REQUIRE(r.kind == commit_result::outcome::committed);
  CHECK(ch.query("SELECT count(), uniqExact(id) FROM weir_records FINAL") == "4\t4\n");
  for (const auto& rec : batch) {
    INFO(rec.id);
    std::string hex;
    for (unsigned char c : rec.payload) {
      static const char digits[] = "0123456789ABCDEF";
      hex += digits[c >> 4];
      hex += digits[c & 15];
    }
    CHECK(ch.query("SELECT hex(payload) FROM weir_records FINAL WHERE id = '" + rec.id + "'") == hex + "\n");
  }
  CHECK(ch.query("SELECT engine FROM system.tables WHERE name = 'weir_records'") == "ReplacingMergeTree\n");
}

TEST_CASE("clickhouse: a table of the user's gets typed rows once by id and what it refuses is a dead letter",
          "[sink][clickhouse][mapping]") {
  clickhouse_server ch;
  ch.query(events_table);
  auto sink = clickhouse_factory(ch, events_keys)->make();
  std::vector<sink_record> batch{
      record_of(event(1, R"("login")", "2026-12-07 10:00:00"), 0),
      record_of("not json", 1),
      record_of(event(2, R"("x")", "not a time"), 2),  // DateTime cannot read it
      record_of(event(3, R"("tab\there, line\nthere, back\\slash")", "2026-12-07 10:00:03"), 3),
      record_of(R"({"user": "many", "event": {"kind": "k"}, "ts": "2026-12-07 10:00:04"})", 4),  // not a UInt64
      record_of(event(5, R"("k")", "2026-12-07 10:00:05"), 5),
      record_of(event(6, R"({"deep": [1, 2]})", "2026-12-07 10:00:06"), 6),
      record_of(R"({"user": 7, "event": {}, "ts": "2026-12-07 10:00:07"})", 7),  // no /event/kind
  };
  auto r = sink->commit(batch);
  REQUIRE(r.kind == commit_result::outcome::committed);
  std::vector<std::size_t> refused;
  for (const auto& [at, why] : r.rejected) refused.push_back(at);
  CHECK(refused == std::vector<std::size_t>{1, 2, 4, 7});
  REQUIRE(r.rejected.size() == 4);
  CHECK(r.rejected[0].second == "the payload is not JSON (events takes its columns from a JSON object)");
  for (const std::size_t k : {1, 2}) {
    INFO(r.rejected[k].second);
    CHECK(r.rejected[k].second.rfind("clickhouse HTTP ", 0) == 0);  // 400 or 500, by the error
    CHECK(clickhouse_row_error(clickhouse_error_code(r.rejected[k].second), r.rejected[k].second));
  }
  CHECK(r.rejected[3].second == "the payload has no /event/kind for column kind");
  CHECK(ch.query("SELECT weir_id, user_id, kind, at FROM events FINAL ORDER BY user_id") ==
        batch[0].id + "\t1\tlogin\t2026-12-07 10:00:00\n" +  //
        batch[3].id + "\t3\ttab\\there, line\\nthere, back\\\\slash\t2026-12-07 10:00:03\n" +
        batch[5].id + "\t5\tk\t2026-12-07 10:00:05\n" +  //
        batch[6].id + "\t6\t{\"deep\": [1, 2]}\t2026-12-07 10:00:06\n");

  // Delivered again (a crash before the cursor was stored): one row each.
  r = sink->commit(batch);
  CHECK(r.rejected.size() == 4);
  CHECK(ch.query("SELECT count(), uniqExact(weir_id) FROM events FINAL") == "4\t4\n");
}

TEST_CASE("clickhouse: a value an Enum does not list is a dead letter and the rest of its block goes in",
          "[sink][clickhouse][mapping]") {
  clickhouse_server ch;
  ch.query("CREATE TABLE en (weir_id String, k String, e Enum8('a' = 1, 'b' = 2)) ENGINE = ReplacingMergeTree "
           "ORDER BY weir_id");
  auto sink = clickhouse_factory(ch, {"sink.clickhouse.table=en", "sink.clickhouse.columns={k: /k, e: /e}"})->make();
  const auto r = sink->commit({record_of(R"({"k": "good1", "e": "a"})", 0), record_of(R"({"k": "bad", "e": "zzz"})", 1),
                               record_of(R"({"k": "good2", "e": "b"})", 2)});
  REQUIRE(r.kind == commit_result::outcome::committed);
  REQUIRE(r.rejected.size() == 1);
  CHECK(r.rejected[0].first == 1);
  CHECK(r.rejected[0].second.find("Unknown element 'zzz'") != std::string::npos);
  CHECK(ch.query("SELECT k, e FROM en FINAL ORDER BY k") == "good1\ta\ngood2\tb\n");
}

TEST_CASE("clickhouse: a table that cannot hold each record once stops the start with one line",
          "[sink][clickhouse][mapping]") {
  clickhouse_server ch;
  for (const std::string ddl : {
           "plain (weir_id String, user_id UInt64, kind String, at String) ENGINE = MergeTree ORDER BY weir_id",
           "by_user (weir_id String, user_id UInt64, kind String, at String) ENGINE = ReplacingMergeTree ORDER BY "
           "user_id",
           "pair (weir_id String, user_id UInt64, kind String, at String) ENGINE = ReplacingMergeTree ORDER BY "
           "(user_id, weir_id)",
           "numbered (weir_id UInt64, user_id UInt64, kind String, at String) ENGINE = ReplacingMergeTree ORDER BY "
           "weir_id",
           "narrow (weir_id String, user_id UInt64) ENGINE = ReplacingMergeTree ORDER BY weir_id",
           "derived (weir_id String, user_id UInt64, kind String, at String MATERIALIZED kind) ENGINE = "
           "ReplacingMergeTree ORDER BY weir_id"})
    ch.query("CREATE TABLE " + ddl);
  ch.query("CREATE DATABASE app");
  ch.query("CREATE TABLE app.events (weir_id FixedString(64), user_id UInt64, kind String, at String) ENGINE = "
           "ReplacingMergeTree ORDER BY weir_id");
  auto refusal = [&](const std::string& table) {
    return refusal_of([&] { clickhouse_factory(ch, {"sink.clickhouse.table=" + table, events_keys[1]}); });
  };
  CHECK(refusal("pair") == "accepted");
  CHECK(refusal("app.events") == "accepted");
  CHECK(refusal("missing") == "sink.clickhouse.table = missing: no such table in database default (weir fills a "
                              "table of yours; create it first)");
  CHECK(refusal("plain") == "sink.clickhouse.table = plain: its engine is MergeTree, which keeps every copy of a "
                            "record delivered again: use a ReplacingMergeTree with weir_id in its ORDER BY");
  CHECK(refusal("by_user") == "sink.clickhouse.table = by_user: column weir_id is not in its ORDER BY: a "
                              "ReplacingMergeTree folds a record delivered again only by its sorting key");
  CHECK(refusal("numbered") == "sink.clickhouse.table = numbered: column weir_id is UInt64, which cannot hold a "
                               "record id (64 hex characters): make it String");
  CHECK(refusal("narrow") == "sink.clickhouse.table = narrow: it has no column at (its columns: weir_id, user_id)");
  CHECK(refusal("derived") == "sink.clickhouse.table = derived: column at is MATERIALIZED: it takes no value");

  // A server that does not answer yet is no reason not to start.
  ch.stop();
  CHECK(refusal("missing") == "accepted");
}

TEST_CASE("clickhouse: a server down or a table gone is retried and never dead-lettered", "[sink][clickhouse]") {
  clickhouse_server ch;
  ch.query(events_table);
  auto sink = clickhouse_factory(ch, events_keys)->make();
  const std::vector<sink_record> batch{record_of(event(1, R"("a")", "2026-12-07 10:00:01"), 0),
                                       record_of(event(2, R"("b")", "2026-12-07 10:00:02"), 1)};
  REQUIRE(sink->commit({batch[0]}).kind == commit_result::outcome::committed);

  ch.query("DROP TABLE events");
  auto r = sink->commit(batch);
  CHECK(r.kind == commit_result::outcome::transient);
  CHECK(r.rejected.empty());
  CHECK(r.answered);
  CHECK(r.error.find("Code: 60") != std::string::npos);  // unknown table
  r = sink->commit(batch);  // looked at again: says what is missing
  CHECK(r.kind == commit_result::outcome::transient);
  CHECK(r.error == "clickhouse: sink.clickhouse.table = default.events: no such table in database default (weir "
                   "fills a table of yours; create it first)");

  ch.query(events_table);
  ch.stop();
  r = sink->commit(batch);
  CHECK(r.kind == commit_result::outcome::transient);
  CHECK_FALSE(r.answered);
  std::string why;
  CHECK(sink->probe(why) == sink_health::down);
  ch.start();
  CHECK(sink->probe(why) == sink_health::healthy);
  r = sink->commit(batch);
  CHECK(r.kind == commit_result::outcome::committed);
  CHECK(ch.query("SELECT user_id, kind FROM events FINAL ORDER BY user_id") == "1\ta\n2\tb\n");
}

TEST_CASE("clickhouse: every acked record reaches a table of the user's once across a kill -9",
          "[live][sink][clickhouse][mapping]") {
  clickhouse_server ch;
  ch.query(events_table);
  temp_dir dir;
  auto args = ch.sink_args();
  args.insert(args.end(), {"--set", events_keys[0], "--set", events_keys[1]});
  kill_and_redeliver(
      dir.path(), args, 300, [](int i) { return event(i, R"("k")", "2026-12-07 10:00:00"); },
      [&] { return std::stoul(ch.query("SELECT count() FROM events FINAL")); });
  CHECK(ch.query("SELECT count(), uniqExact(weir_id), min(user_id), max(user_id) FROM events FINAL") ==
        "300\t300\t0\t299\n");
}
