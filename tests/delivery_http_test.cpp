// Delivery to an HTTP endpoint, end to end: records pushed over the socket
// reach a real HTTP server (a Beast test server that can misbehave on cue),
// raw and ndjson, through 5xx, 429 + Retry-After, resets and an outage;
// refused records land in the dead letters, and a full dead-letter space
// stops delivery until room is made.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "wire/coordinate.hpp"
#include "sinks/base64.hpp"
#include "support/daemon_process.hpp"
#include "support/http_get.hpp"
#include "support/http_test_server.hpp"
#include "support/nginx_server.hpp"
#include "support/sink_contents.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "wab/dead_letter_store.hpp"
#include "wab/file_io.hpp"
#include "weir/client.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> http_args(const http_test_server& server, const std::string& format = "raw") {
  return {"--set", "sink.type=http",  "--set", "sink.http.url=" + server.url(), "--set", "sink.http.format=" + format,
          "--set", "sink.retry.initial_ms=50", "--set", "sink.retry.max_ms=400", "--set", "sink.concurrency=2",
          "--set", "sink.http.headers={X-Weir-Test: yes}", "--set", "sink.timeout_ms=500"};
}

/// The endpoint refuses for good (422) every record that says "poison".
http_answer refuse_poison(const http_request_seen& r, std::size_t) {
  http_answer a;
  if (r.body.find("poison") != std::string::npos) a.status = 422;
  return a;
}

}  // namespace

TEST_CASE("http raw: one POST per record with its Idempotency-Key and the configured headers", "[live][sink][http]") {
  http_test_server server;
  temp_dir dir;
  daemon_process d(dir.path(), http_args(server));
  REQUIRE(d.wait_ready());
  std::map<std::string, std::string> id_of;
  {
    auto c = client::connection::connect_unix(d.socket_path());
    for (int i = 0; i < 30; ++i) {
      const std::string p = "raw record " + std::to_string(i);
      auto r = c.push_tracked(as_bytes(p), i % 2 ? client::durability::buffered : client::durability::durable);
      REQUIRE(r.acked);
      id_of[p] = r.record_id_hex;
    }
  }
  REQUIRE(eventually([&] { return server.accepted().size() >= 30; }));
  for (const auto& req : server.accepted()) {
    REQUIRE(id_of.count(req.body));
    CHECK(req.headers.at("idempotency-key") == "sha256:" + id_of[req.body]);
    CHECK(req.headers.at("x-weir-test") == "yes");
    CHECK(req.headers.at("content-type") == "application/octet-stream");
    CHECK(req.target == "/ingest");
  }
  CHECK(server.accepted_bodies().size() == 30);
  CHECK(d.stop() == 0);
}

TEST_CASE("http raw into nginx: every record arrives with its key", "[live][sink][http][nginx]") {
  nginx_server nginx;
  temp_dir dir;
  daemon_process d(dir.path(), {"--set", "sink.type=http", "--set", "sink.http.url=" + nginx.url()});
  REQUIRE(d.wait_ready());
  std::set<std::string> expected;
  {
    auto c = client::connection::connect_unix(d.socket_path());
    for (int i = 0; i < 40; ++i) {
      const std::string p = "to-nginx-" + std::to_string(i);
      auto r = c.push_tracked(as_bytes(p), client::durability::durable);
      REQUIRE(r.acked);
      expected.insert("sha256:" + r.record_id_hex + " " + p);
    }
  }
  REQUIRE(eventually([&] { return nginx.logged().size() >= 40; }));
  const auto lines = nginx.logged();
  CHECK(std::set<std::string>(lines.begin(), lines.end()) == expected);
  CHECK(d.stop() == 0);
}

TEST_CASE("http ndjson: one POST per batch and one JSON envelope per record whatever the payload's bytes",
          "[live][sink][http][ndjson]") {
  http_test_server server;
  temp_dir dir;
  daemon_process d(dir.path(), http_args(server, "ndjson"));
  REQUIRE(d.wait_ready());
  struct sent_record {
    std::string payload, encoding;
  };
  const std::vector<sent_record> sent{
      {"{\"order\": 17, \"items\": [\"a\", \"b\"]}", "json"},
      {"{\n  \"pretty\": true,\n  \"lines\": 3\n}\n", "json"},  // line breaks between tokens
      {"42", "json"},
      {"plain text", "text"},
      {"two\nlines of text\r\n", "text"},
      {"caf\xc3\xa9 \xe2\x82\xac", "text"},
      {std::string("bin\0ary\xff\xfe", 10), "base64"},
      {"{\"almost\": json", "text"},
      {"\xEF\xBB\xBF{\"saved\": \"by a Windows editor\"}", "text"},  // a BOM may not sit inside a JSON line
  };
  {
    auto c = client::connection::connect_unix(d.socket_path());
    std::vector<std::string> payloads;
    for (const auto& s : sent) payloads.push_back(s.payload);
    REQUIRE(c.push_batch(spans_of(payloads), client::durability::durable).all_accepted());
  }
  std::vector<nlohmann::json> lines;
  REQUIRE(eventually([&] {
    lines.clear();
    for (const auto& req : server.accepted()) {
      CHECK(req.headers.at("content-type") == "application/x-ndjson");
      std::size_t from = 0;
      for (auto nl = req.body.find('\n'); nl != std::string::npos; from = nl + 1, nl = req.body.find('\n', from))
        lines.push_back(nlohmann::json::parse(req.body.substr(from, nl - from)));  // every line is one JSON value
    }
    return lines.size() >= sent.size();
  }));
  REQUIRE(lines.size() == sent.size());
  int checked = 0;
  for (const auto& line : lines) {
    for (const char* key : {"id", "shard", "seq", "idx", "segment", "ts", "encoding", "payload"})
      CHECK(line.contains(key));
    const auto idx = line.at("idx").get<std::size_t>();  // records 1.. of the segment, in push order
    REQUIRE(idx >= 1);
    REQUIRE(idx <= sent.size());
    const auto& want = sent[idx - 1];
    INFO(want.payload);
    CHECK(line.at("encoding") == want.encoding);
    if (want.encoding == "json") CHECK(line.at("payload") == nlohmann::json::parse(want.payload));
    if (want.encoding == "text") CHECK(line.at("payload").get<std::string>() == want.payload);
    if (want.encoding == "base64") CHECK(base64_decode(line.at("payload").get<std::string>()) == want.payload);
    ++checked;
  }
  CHECK(checked == static_cast<int>(sent.size()));
  CHECK(dead_letter_files(dir / "var") == 0);
  CHECK(d.stop() == 0);
}

TEST_CASE("http raw: pipelined POSTs are answered in order through refusals and a server that closes or resets",
          "[live][sink][http][faults]") {
  http_test_server server([](const http_request_seen& r, std::size_t nth) {
    http_answer a;
    if (r.body.find("poison") != std::string::npos) a.status = 422;
    if (nth % 9 == 4) a.close = true;  // answered, then the connection ends mid-window
    if (nth == 13) a.reset = true;     // not answered: the connection breaks mid-window
    return a;
  });
  temp_dir dir;
  auto args = http_args(server);
  args.insert(args.end(), {"--set", "sink.concurrency=1", "--set", "sink.http.pipeline=16"});
  daemon_process d(dir.path(), args);
  REQUIRE(d.wait_ready());
  std::vector<std::string> good, poison;
  {
    std::vector<std::string> payloads;
    for (int i = 0; i < 60; ++i) {
      payloads.push_back((i % 10 == 7 ? "poison " : "pipe ") + std::to_string(i));
      (i % 10 == 7 ? poison : good).push_back(payloads.back());
    }
    auto c = client::connection::connect_unix(d.socket_path());
    std::vector<std::span<const std::uint8_t>> spans;
    for (const auto& p : payloads) spans.push_back(as_bytes(p));
    REQUIRE(c.push_batch(spans, client::durability::durable).all_accepted());
  }
  REQUIRE(eventually([&] {
    const auto got = server.accepted_bodies();
    return std::all_of(good.begin(), good.end(), [&](const std::string& p) { return got.count(p) == 1; });
  }));
  REQUIRE(eventually([&] {
    return std::all_of(poison.begin(), poison.end(), [&](const std::string& p) { return dead_lettered(dir / "var", p); });
  }));
  CHECK(poison.size() == 6);
  for (const auto& p : good) CHECK_FALSE(dead_lettered(dir / "var", p));
  for (const auto& p : poison) CHECK(server.accepted_bodies().count(p) == 0);
  // Requests went out ahead of their answers.
  CHECK(server.pipelined() > 0);
  CHECK(d.stop() == 0);
}

TEST_CASE("http faults: 5xx then 429 with Retry-After then a reset and a hung answer and nothing is lost",
          "[live][sink][http][faults]") {
  http_test_server server([](const http_request_seen&, std::size_t nth) {
    http_answer a;
    if (nth < 3) a.status = 503;
    else if (nth == 3) a = {429, {{"Retry-After", "1"}}};
    else if (nth == 4) a.reset = true;
    else if (nth == 5) a.delay = 3000ms;  // longer than sink.timeout_ms: the slot must not wedge
    return a;
  });
  temp_dir dir;
  auto args = http_args(server);
  args.insert(args.end(), {"--set", "sink.concurrency=1"});  // one commit at a time: the faults come in this order
  daemon_process d(dir.path(), args);
  REQUIRE(d.wait_ready());
  {
    auto c = client::connection::connect_unix(d.socket_path());
    for (int i = 0; i < 10; ++i) REQUIRE(c.push(as_bytes("flaky " + std::to_string(i)), client::durability::durable).acked);
  }
  REQUIRE(eventually([&] { return server.accepted_bodies().size() == 10; }));
  CHECK(d.log().find("sink commit failed; retrying") != std::string::npos);
  CHECK(d.log().find("HTTP 503") != std::string::npos);
  INFO(d.log());
  CHECK(d.log().find("timeout") != std::string::npos);
  CHECK(d.stop() == 0);
}

TEST_CASE("http raw: an endpoint that fails one request in forty still gets a backlog of large batches through",
          "[live][sink][http][faults]") {
  // Each try goes on from the first record not answered: were it to start a
  // 1000-record batch over, no try would ever get through.
  http_test_server server([](const http_request_seen&, std::size_t nth) {
    http_answer a;
    if (nth % 40 == 39) a.status = 503;
    return a;
  });
  server.stop();  // a backlog builds up, to be read in full batches
  temp_dir dir;
  daemon_process d(dir.path(), http_args(server));
  REQUIRE(d.wait_ready());
  constexpr int n = 3000;
  {
    auto c = client::connection::connect_unix(d.socket_path());
    for (int i = 0; i < n; i += 100) {
      std::vector<std::string> owned;
      for (int k = i; k < i + 100; ++k) owned.push_back("backlog " + std::to_string(k));
      std::vector<std::span<const std::uint8_t>> batch;
      for (const auto& o : owned) batch.push_back(as_bytes(o));
      REQUIRE(c.push_batch(batch, client::durability::durable).all_accepted());
    }
  }
  server.start();
  INFO(d.log());
  REQUIRE(eventually([&] { return server.accepted_bodies().size() == n; }, 30s));
  CHECK(d.log().find("HTTP 503") != std::string::npos);
  CHECK(d.stop() == 0);
}

TEST_CASE("http: a refused record is dead-lettered and the others are delivered", "[live][sink][http][dead-letter]") {
  http_test_server server(refuse_poison);
  temp_dir dir;
  daemon_process d(dir.path(), http_args(server));
  REQUIRE(d.wait_ready());
  {
    auto c = client::connection::connect_unix(d.socket_path());
    for (int i = 0; i < 12; ++i) {
      const std::string p = i % 4 == 1 ? "poison " + std::to_string(i) : "good " + std::to_string(i);
      REQUIRE(c.push(as_bytes(p), client::durability::durable).acked);
    }
  }
  REQUIRE(eventually([&] { return server.accepted_bodies().size() == 9; }));
  REQUIRE(eventually([&] {
    return dead_lettered(dir / "var", "poison 1") && dead_lettered(dir / "var", "poison 5") &&
           dead_lettered(dir / "var", "poison 9");
  }));
  CHECK(dead_letter_files(dir / "var") == 1);
  CHECK(eventually([&] { return d.log().find("dead-lettered") != std::string::npos; }));
  // The operator's view of them.
  const auto listed = run_binary(binary("weir-ctl"), {"--data-dir", "var", "--json", "dl", "list"}, dir.path());
  REQUIRE(listed.exit_code == 0);
  const auto letters = nlohmann::json::parse(listed.out);
  REQUIRE(letters.size() == 3);
  CHECK(letters[0]["reason"] == "HTTP 422");
  CHECK(letters[0]["payload"].get<std::string>().rfind("poison ", 0) == 0);
  CHECK(letters[0]["segment"].get<std::string>().find("/seg_") != std::string::npos);
  // The endpoint is fixed: the operator requeues the dead letters.
  server.set_rule({});
  const auto dry = run_binary(binary("weir-ctl"), {"--data-dir", "var", "dl", "requeue"}, dir.path());
  CHECK(dry.out.find("would push 3 dead letters") != std::string::npos);
  CHECK(dead_letter_files(dir / "var") == 1);
  const auto requeued = run_binary(binary("weir-ctl"), {"--data-dir", "var", "--socket", d.socket_path(), "dl", "requeue", "--yes"},
                                   dir.path());
  CHECK(requeued.exit_code == 0);
  CHECK(dead_letter_files(dir / "var") == 0);
  REQUIRE(eventually([&] { return server.accepted_bodies().size() == 12; }));

  // Refused again; this time the operator drops them for good.
  server.set_rule(refuse_poison);
  {
    auto c = client::connection::connect_unix(d.socket_path());
    REQUIRE(c.push(as_bytes("poison again"), client::durability::durable).acked);
  }
  REQUIRE(eventually([&] { return dead_lettered(dir / "var", "poison again"); }));
  const auto dry_drop = run_binary(binary("weir-ctl"), {"--data-dir", "var", "dl", "drop"}, dir.path());
  CHECK(dry_drop.exit_code == 0);
  CHECK(dry_drop.out.find("would delete 1 dead-letter file (1 records") != std::string::npos);
  CHECK(dead_letter_files(dir / "var") == 1);
  const auto wrong = run_binary(binary("weir-ctl"), {"--data-dir", "var", "dl", "drop", "dl_99999999.wab", "--yes"},
                                dir.path());
  CHECK(wrong.exit_code == 2);
  CHECK(dead_letter_files(dir / "var") == 1);
  const auto dropped = run_binary(binary("weir-ctl"), {"--data-dir", "var", "dl", "drop", "--yes"}, dir.path());
  CHECK(dropped.exit_code == 0);
  CHECK(dropped.out.find("deleted 1 dead-letter file (1 records)") != std::string::npos);
  CHECK(dead_letter_files(dir / "var") == 0);
  CHECK(d.stop() == 0);
}

TEST_CASE("http: letters requeued to a sink that still refuses them are dead-lettered again and none is lost",
          "[live][sink][http][dead-letter][ctl]") {
  // The daemon stores the letters refused again while weir-ctl is still
  // pushing the rest: into a new file, never the one weir-ctl then deletes.
  http_test_server server(refuse_poison);
  temp_dir dir;
  daemon_process d(dir.path(), http_args(server));
  REQUIRE(d.wait_ready());
  constexpr int n = 200;
  {
    auto c = client::connection::connect_unix(d.socket_path());
    for (int i = 0; i < n; ++i) REQUIRE(c.push(as_bytes("poison " + std::to_string(i)), client::durability::durable).acked);
  }
  auto letters = [&] {
    const auto listed = run_binary(binary("weir-ctl"), {"--data-dir", "var", "--json", "dl", "list"}, dir.path());
    REQUIRE(listed.exit_code == 0);
    return nlohmann::json::parse(listed.out).size();
  };
  REQUIRE(eventually([&] { return letters() == n; }));
  const auto requeued = run_binary(binary("weir-ctl"), {"--data-dir", "var", "--socket", d.socket_path(), "dl", "requeue", "--yes"},
                                   dir.path());
  REQUIRE(requeued.exit_code == 0);
  CHECK(requeued.out.find("requeued 200 dead letters") != std::string::npos);
  // Every one refused again and kept: the sink saw each twice.
  REQUIRE(eventually([&] { return server.requests() >= 2 * n; }));
  std::size_t now = 0;
  CHECK(eventually([&] { return (now = letters()) == n; }));
  CHECK(now == n);
  CHECK(d.stop() == 0);
}

TEST_CASE("http: a record dead-lettered twice (refused again after a restart) is requeued once",
          "[live][sink][http][dead-letter][ctl]") {
  http_test_server server;
  temp_dir dir;
  daemon_process d(dir.path(), http_args(server));
  REQUIRE(d.wait_ready());
  {
    // As a crash leaves them: the same record refused in two runs, in two files.
    dead_letter_store store(wab::default_file_io(), (dir / "var/dead_letter").string(), 1 << 20);
    sink_record twice, once;
    twice.segment = once.segment = "shard_00/seg_00000007.wab";
    twice.index = 3;
    once.index = 4;
    twice.payload = {'t', 'w', 'i', 'c', 'e'};
    once.payload = {'o', 'n', 'c', 'e'};
    std::string error;
    REQUIRE(store.store({{&twice, "HTTP 422"}, {&once, "HTTP 422"}}, error) == dead_letter_store::result::stored);
    store.rescan();
  }
  {
    dead_letter_store again(wab::default_file_io(), (dir / "var/dead_letter").string(), 1 << 20);
    sink_record twice;
    twice.segment = "shard_00/seg_00000007.wab";
    twice.index = 3;
    twice.payload = {'t', 'w', 'i', 'c', 'e'};
    std::string error;
    REQUIRE(again.store({{&twice, "HTTP 422"}}, error) == dead_letter_store::result::stored);
  }
  REQUIRE(dead_letter_files(dir / "var") == 2);
  const auto requeued = run_binary(binary("weir-ctl"), {"--data-dir", "var", "--socket", d.socket_path(), "dl", "requeue", "--yes"},
                                   dir.path());
  REQUIRE(requeued.exit_code == 0);
  CHECK(requeued.out.find("requeued 2 dead letters (1 more were copies") != std::string::npos);
  CHECK(dead_letter_files(dir / "var") == 0);
  REQUIRE(eventually([&] { return server.accepted_bodies().size() == 2; }));
  CHECK(server.requests() == 2);
  CHECK(d.stop() == 0);
}

TEST_CASE("http outage: ten seconds down while records keep being acked and all arrive after", "[live][sink][http][outage]") {
  http_test_server server;
  temp_dir dir;
  daemon_process d(dir.path(), http_args(server));
  REQUIRE(d.wait_ready());
  auto c = client::connection::connect_unix(d.socket_path());
  REQUIRE(c.push(as_bytes("before"), client::durability::durable).acked);
  REQUIRE(eventually([&] { return server.accepted_bodies().count("before") == 1; }));
  server.stop();
  const auto down_since = std::chrono::steady_clock::now();
  int n = 0;
  while (std::chrono::steady_clock::now() - down_since < 10s) {
    REQUIRE(c.push(as_bytes("during " + std::to_string(n++)), client::durability::durable).acked);
    std::this_thread::sleep_for(50ms);
  }
  CHECK(d.log().find("sink commit failed; retrying") != std::string::npos);
  server.start();
  REQUIRE(eventually([&] { return server.accepted_bodies().size() == static_cast<std::size_t>(n) + 1; }, 30s));
  CHECK(d.stop() == 0);
}

TEST_CASE("a full dead-letter space stops delivery until room is made", "[live][sink][http][dead-letter]") {
  http_test_server server([](const http_request_seen& r, std::size_t) {
    http_answer a;
    if (r.body.rfind("big-poison", 0) == 0) a.status = 400;
    return a;
  });
  temp_dir dir;
  auto args = http_args(server);
  args.insert(args.end(), {"--set", "drain.dead_letter_max_bytes=1MiB", "--set", "sink.concurrency=1"});
  daemon_process d(dir.path(), args);
  REQUIRE(d.wait_ready());
  auto c = client::connection::connect_unix(d.socket_path());
  // Three refused records of 400 KiB, one batch each, fill the 1 MiB dead-letter space.
  for (int i = 0; i < 3; ++i) {
    const std::string name = "big-poison " + std::to_string(i);
    REQUIRE(c.push(as_bytes(name + std::string(400 * 1024, 'x')), client::durability::durable).acked);
    if (i < 2) REQUIRE(eventually([&] { return dead_lettered(dir / "var", name); }));
  }
  REQUIRE(eventually([&] { return d.log().find("delivery stopped: dead letters are full") != std::string::npos; }));
  // Ingest goes on; delivery does not.
  REQUIRE(c.push(as_bytes("after the stop"), client::durability::durable).acked);
  std::this_thread::sleep_for(500ms);
  CHECK(server.accepted_bodies().count("after the stop") == 0);
  // The operator inspects and removes the dead letters: delivery resumes.
  for (const auto& e : std::filesystem::directory_iterator(dir / "var/dead_letter")) std::filesystem::remove(e.path());
  REQUIRE(eventually([&] { return server.accepted_bodies().count("after the stop") == 1; }));
  REQUIRE(eventually([&] { return dead_lettered(dir / "var", "big-poison 2"); }));
  CHECK(d.stop() == 0);
}

TEST_CASE("over limits.wab_max_bytes pushes are refused until delivery frees space", "[live][sink][cap]") {
  http_test_server server;
  server.stop();  // the sink is down from the start: nothing drains
  temp_dir dir;
  auto args = http_args(server);
  const auto admin = free_tcp_port();
  args.insert(args.end(), {"--set", "limits.wab_max_bytes=16MiB", "--set", "wab.segment_max_bytes=64KiB",
                           "--set", "ingest.shards=1", "--set", "admin.listen=127.0.0.1:" + std::to_string(admin)});
  daemon_process d(dir.path(), args);
  REQUIRE(d.wait_ready());
  auto c = client::connection::connect_unix(d.socket_path());
  const std::string chunk(64 * 1024, 'k');
  int acked = 0;
  client::push_result refused;
  for (int i = 0; i < 1000; ++i) {
    auto r = c.push(as_bytes(std::to_string(i) + chunk), client::durability::buffered);
    if (!r.acked) {
      refused = r;
      break;
    }
    ++acked;
  }
  CHECK(acked > 200);  // about 16 MiB of 64 KiB records went in
  CHECK(acked < 300);
  REQUIRE_FALSE(refused.acked);
  CHECK(refused.nack == 0x06);  // InternalError: retry later, the connection stays open
  CHECK_FALSE(c.push(as_bytes("still full"), client::durability::durable).acked);
  const auto ready = http_request(admin, "/readyz");
  CHECK(ready.status == 503);
  CHECK(ready.body.find("over limits.wab_max_bytes") != std::string::npos);
  CHECK(http_request(admin, "/metrics").body.find("weir_wab_cap_rejections_total 0") == std::string::npos);

  server.start();  // delivery resumes, confirmed segments are deleted, space frees
  const bool resumed = eventually([&] { return c.push(as_bytes("room again"), client::durability::durable).acked; }, 60s);
  std::string files;
  for (const auto& e : std::filesystem::directory_iterator(dir / "var/wab/shard_00"))
    files += e.path().filename().string() + " ";
  INFO(d.log() << "\nrequests seen: " << server.requests() << " accepted: " << server.accepted().size()
               << "\nWAB files: " << files);
  REQUIRE(resumed);
  REQUIRE(eventually([&] { return server.accepted_bodies().count("room again") == 1; }, 30s));
  CHECK(d.stop() == 0);
}
