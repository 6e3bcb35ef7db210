// Several sinks at once (a `sinks:` list), end to end on the real binary:
// each sink gets every record on its own while another is down, the WAB
// keeps a segment until every sink has confirmed it, a kill -9 loses
// nothing for either, and the WAB at its cap says which sink holds it.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/daemon_process.hpp"
#include "support/http_get.hpp"
#include "support/http_test_server.hpp"
#include "support/sink_contents.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "wab/segment_format.hpp"
#include "weir/client.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// A SQLite sink named db and an HTTP sink named hook, one shard with small
/// segments (so that several are sealed), retries quick.
std::vector<std::string> two_sinks(const std::filesystem::path& dir, const http_test_server& hook,
                                   std::uint16_t admin) {
  const std::string list = "[{name: db, type: sqlite, sqlite: {path: " + (dir / "sink.db").string() +
                           "}}, {name: hook, type: http, http: {url: \"" + hook.url() + "\", format: raw}}]";
  return {"--set", "sinks=" + list,
          "--set", "sink.retry.initial_ms=50",
          "--set", "sink.retry.max_ms=300",
          "--set", "sink.health_interval_ms=200",
          "--set", "ingest.shards=1",
          "--set", "wab.segment_max_bytes=64KiB",
          "--set", "wab.spare_segments=0",
          "--set", "drain.cursor_persist_ms=20",
          "--set", "admin.listen=127.0.0.1:" + std::to_string(admin)};
}

std::string payload_of(int i) { return "record " + std::to_string(i) + " " + std::string(200, 'x'); }

void push_all(const daemon_process& d, int from, int to) {
  auto c = client::connection::connect_unix(d.socket_path());
  for (int i = from; i < to; ++i) REQUIRE(c.push(as_bytes(payload_of(i)), client::durability::durable).acked);
}

std::set<std::string> sqlite_payloads(const std::filesystem::path& db) {
  std::set<std::string> out;
  for (const auto& r : sqlite_rows(db)) out.insert(r.payload);
  return out;
}

std::set<std::string> payloads(int n) {
  std::set<std::string> out;
  for (int i = 0; i < n; ++i) out.insert(payload_of(i));
  return out;
}

/// The shard's segment files, by sequence.
std::set<std::uint64_t> segments_in(const std::filesystem::path& shard_dir) {
  std::set<std::uint64_t> out;
  for (const auto& e : std::filesystem::directory_iterator(shard_dir))
    if (auto seq = wab::parse_segment_file_name(e.path().filename().string())) out.insert(*seq);
  return out;
}

nlohmann::json sink_status(std::uint16_t admin, const std::string& name) {
  const auto status = nlohmann::json::parse(http_request(admin, "/api/v1/status").body);
  for (const auto& s : status["sinks"])
    if (s["name"] == name) return s;
  FAIL("no sink " << name << " in the status");
  return {};
}

}  // namespace

TEST_CASE("several sinks: one down does not hold the other back and the WAB keeps what it has not confirmed",
          "[live][sink][sinks]") {
  temp_dir dir;
  http_test_server hook;
  hook.stop();  // down from the start
  const auto admin = free_tcp_port();
  daemon_process d(dir.path(), two_sinks(dir.path(), hook, admin));
  REQUIRE(d.wait_ready());
  const int records = 1500;  // about 350 KiB: several 64 KiB segments
  push_all(d, 0, records);
  INFO(d.log());

  // The database gets every record while the endpoint is down...
  REQUIRE(eventually([&] { return sqlite_payloads(dir / "sink.db").size() == static_cast<std::size_t>(records); }, 20s));
  CHECK(sqlite_rows(dir / "sink.db").size() == static_cast<std::size_t>(records));
  // ...and every segment stays: the endpoint has confirmed none of them.
  const auto shard_dir = dir / "var/wab/shard_00";
  const auto held = segments_in(shard_dir);
  REQUIRE(held.size() >= 4);
  const auto hook_down = sink_status(admin, "hook");
  CHECK(hook_down["lag_records"] == records);
  CHECK(hook_down["health"] == "down");
  CHECK(sink_status(admin, "db")["lag_records"] == 0);
  const auto ready = http_request(admin, "/readyz");
  CHECK(ready.body.find("sink hook:") != std::string::npos);
  CHECK(std::filesystem::exists(shard_dir / "confirm_cursor-db"));
  CHECK(std::filesystem::exists(shard_dir / "confirm_cursor-hook"));
  CHECK(std::filesystem::is_directory(dir / "var/dead_letter-db"));
  const auto scrape = http_request(admin, "/metrics").body;
  CHECK(scrape_series(scrape, "weir_drain_lag_records{shard=\"0\",sink=\"hook\"}") == records);
  CHECK(scrape_series(scrape, "weir_drain_lag_records{shard=\"0\",sink=\"db\"}") == 0);
  CHECK(scrape_series(scrape, "weir_sink_health{state=\"down\",sink=\"hook\"}") == 1);
  CHECK(scrape_series(scrape, "weir_sink_commit_records_total{outcome=\"committed\",sink=\"db\"}") == records);

  // The endpoint comes back: it gets every record, and then the sealed
  // segments go (every sink has confirmed them).
  hook.start();
  REQUIRE(eventually([&] { return hook.accepted_bodies() == payloads(records); }, 30s));
  REQUIRE(eventually([&] { return segments_in(shard_dir).size() <= 1; }, 10s));
  CHECK(*segments_in(shard_dir).begin() > *held.rbegin() - 1);
  CHECK(eventually([&] { return sink_status(admin, "hook")["lag_records"] == 0; }));
  CHECK(sqlite_rows(dir / "sink.db").size() == static_cast<std::size_t>(records));  // nothing sent twice to the database
  CHECK(d.stop() == 0);
}

TEST_CASE("several sinks: a kill -9 while one is down loses nothing for either", "[live][sink][sinks]") {
  temp_dir dir;
  http_test_server hook;
  hook.stop();
  const auto admin = free_tcp_port();
  const int records = 1200;
  {
    daemon_process d(dir.path(), two_sinks(dir.path(), hook, admin));
    REQUIRE(d.wait_ready());
    push_all(d, 0, records / 2);
    INFO(d.log());
    REQUIRE(eventually([&] { return sqlite_rows(dir / "sink.db").size() == static_cast<std::size_t>(records / 2); }, 20s));
    push_all(d, records / 2, records);
    ::kill(d.pid(), SIGKILL);
    CHECK(d.wait_exit() == 128 + SIGKILL);
  }
  hook.start();
  daemon_process again(dir.path(), two_sinks(dir.path(), hook, admin));
  REQUIRE(again.wait_ready());
  INFO(again.log());
  // Every acked record reaches both, the database once each (by id).
  REQUIRE(eventually([&] { return hook.accepted_bodies() == payloads(records); }, 30s));
  REQUIRE(eventually([&] { return sqlite_payloads(dir / "sink.db") == payloads(records); }, 20s));
  CHECK(sqlite_rows(dir / "sink.db").size() == static_cast<std::size_t>(records));
  REQUIRE(eventually([&] { return segments_in(dir / "var/wab/shard_00").size() <= 1; }, 10s));
  CHECK(again.stop() == 0);
}

TEST_CASE("several sinks: the WAB at its cap because of one sink says which in the log and /readyz",
          "[live][sink][sinks]") {
  temp_dir dir;
  http_test_server hook;
  hook.stop();
  const auto admin = free_tcp_port();
  auto args = two_sinks(dir.path(), hook, admin);
  args.insert(args.end(), {"--set", "limits.wab_max_bytes=16MiB", "--set", "wab.segment_max_bytes=1MiB"});
  daemon_process d(dir.path(), args);
  REQUIRE(d.wait_ready());
  auto c = client::connection::connect_unix(d.socket_path());
  const std::string big(60 * 1024, 'b');
  int acked = 0, refused = 0;
  while (refused == 0 && acked < 1000) {
    if (c.push(as_bytes(big), client::durability::buffered).acked) ++acked;
    else ++refused;
  }
  INFO(d.log());
  REQUIRE(refused == 1);
  REQUIRE(acked > 200);  // about 16 MiB went in first
  REQUIRE(eventually([&] { return d.log().find("the WAB reached limits.wab_max_bytes") != std::string::npos; }, 10s));
  CHECK(d.log().find("held_for=\"sink hook (") != std::string::npos);
  const auto ready = http_request(admin, "/readyz");
  CHECK(ready.status == 503);
  CHECK(ready.body.find("held for sink hook (") != std::string::npos);
  // The endpoint comes back: the WAB empties, pushes are taken again, and the log says so.
  hook.start();
  REQUIRE(eventually([&] { return d.log().find("the WAB is back under limits.wab_max_bytes") != std::string::npos; }, 30s));
  CHECK(c.push(as_bytes(big), client::durability::buffered).acked);
  CHECK(d.stop() == 0);
}

TEST_CASE("several sinks: a sink taken out of the list holds nothing back and its cursor goes at the next start",
          "[live][sink][sinks]") {
  temp_dir dir;
  const std::string db = "{name: db, type: sqlite, sqlite: {path: " + (dir / "sink.db").string() + "}}";
  const std::string out = "{name: out, type: file, file: {path: " + (dir / "out.ndjson").string() + "}}";
  const std::vector<std::string> common{"--set", "ingest.shards=1", "--set", "drain.cursor_persist_ms=20"};
  auto with = [&](const std::string& list) {
    auto args = common;
    args.insert(args.end(), {"--set", "sinks=[" + list + "]"});
    return args;
  };
  const auto shard_dir = dir / "var/wab/shard_00";
  {
    daemon_process d(dir.path(), with(db + ", " + out));
    REQUIRE(d.wait_ready());
    push_all(d, 0, 50);
    REQUIRE(eventually([&] { return sqlite_rows(dir / "sink.db").size() == 50; }));
    REQUIRE(d.stop() == 0);
  }
  REQUIRE(std::filesystem::exists(shard_dir / "confirm_cursor-out"));
  daemon_process d(dir.path(), with(db));
  REQUIRE(d.wait_ready());
  INFO(d.log());
  CHECK(d.log().find("a sink is no longer configured: its confirm cursor is removed") != std::string::npos);
  CHECK(d.log().find("sink=out") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(shard_dir / "confirm_cursor-out"));
  CHECK(std::filesystem::exists(shard_dir / "confirm_cursor-db"));
  push_all(d, 50, 60);
  REQUIRE(eventually([&] { return sqlite_rows(dir / "sink.db").size() == 60; }));
  CHECK(d.stop() == 0);
}

TEST_CASE("several sinks: damage only a later sink meets is still reported and quarantined and counted",
          "[live][sink][sinks]") {
  temp_dir dir;
  http_test_server hook;
  hook.stop();
  const auto admin = free_tcp_port();
  const int records = 1500;
  const auto shard_dir = dir / "var/wab/shard_00";
  std::uint64_t damaged_segment = 0;
  {
    daemon_process d(dir.path(), two_sinks(dir.path(), hook, admin));
    REQUIRE(d.wait_ready());
    push_all(d, 0, records);
    REQUIRE(eventually([&] { return sqlite_rows(dir / "sink.db").size() == static_cast<std::size_t>(records); }, 20s));
    REQUIRE(d.stop() == 0);
  }
  // A payload byte of the first record of a sealed segment the database
  // (the first sink) has already delivered: only the endpoint's drain meets it.
  const auto held = segments_in(shard_dir);
  REQUIRE(held.size() >= 3);
  damaged_segment = *std::next(held.begin());
  {
    std::fstream f(shard_dir / wab::segment_file_name(damaged_segment), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(wab::segment_prefix_size + wab::record_header_size + 10));
    f.put('#');
  }
  hook.start();
  daemon_process d(dir.path(), two_sinks(dir.path(), hook, admin));
  REQUIRE(d.wait_ready());
  INFO(d.log());
  REQUIRE(eventually([&] { return hook.accepted_bodies().size() == static_cast<std::size_t>(records - 1); }, 30s));
  REQUIRE(eventually([&] { return d.log().find("WAB segment damaged") != std::string::npos; }));
  CHECK(std::filesystem::exists(dir / "var/quarantine" /
                                ("shard_00__" + wab::segment_file_name(damaged_segment))));
  const auto scrape = http_request(admin, "/metrics").body;
  CHECK(scrape_series(scrape, "weir_drain_damaged_records_lost_total{shard=\"0\"}") == 1);
  CHECK(scrape_series(scrape, "weir_drain_segments_quarantined_total{shard=\"0\"}") == 1);
  CHECK(scrape_series(scrape, "weir_drain_lag_records{shard=\"0\",sink=\"hook\"}") == 0);
  CHECK(d.stop() == 0);
}

TEST_CASE("several sinks: each keeps its own dead letters and weir-ctl dl lists them by sink", "[live][sink][sinks]") {
  temp_dir dir;
  http_test_server hook([](const http_request_seen&, std::size_t) {
    http_answer a;
    a.status = 422;  // refused for good: a dead letter each
    return a;
  });
  const auto admin = free_tcp_port();
  daemon_process d(dir.path(), two_sinks(dir.path(), hook, admin));
  REQUIRE(d.wait_ready());
  push_all(d, 0, 5);
  INFO(d.log());
  REQUIRE(eventually([&] { return sink_status(admin, "hook")["dead_lettered"] == 5; }));
  CHECK(eventually([&] { return sqlite_rows(dir / "sink.db").size() == 5; }));  // the database took them all
  CHECK(sink_status(admin, "db")["dead_lettered"] == 0);
  const std::string data_dir = (dir / "var").string();
  const auto plain = run_binary(binary("weir-ctl"), {"--data-dir", data_dir, "--json", "dl", "list"}, dir.path());
  CHECK(plain.out == "[]\n");  // the default sink's: there is none
  CHECK(plain.err.find("sink hook has 1 dead-letter file: weir-ctl dl --sink hook list") != std::string::npos);
  const auto hooks = run_binary(binary("weir-ctl"), {"--data-dir", data_dir, "--json", "dl", "--sink", "hook", "list"}, dir.path());
  CHECK(hooks.exit_code == 0);
  CHECK(nlohmann::json::parse(hooks.out).size() == 5);
  CHECK(d.stop() == 0);
}
