// weir-bench's own machinery: the minimal server's ack discipline, the
// scenario reader's refusals, each measure on a short round, the catalogue,
// and the report and chart (not how fast anything is: timing lives in
// weir-bench runs).
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "bench/minimal_server.hpp"
#include "bench/scenario.hpp"
#include "wire/frame.hpp"
#include "support/daemon_process.hpp"
#include "support/faulty_file_io.hpp"
#include "support/http_get.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"

namespace {

using weir::test::temp_dir;

int connect_to(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  path.copy(addr.sun_path, sizeof addr.sun_path - 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  REQUIRE(::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

void send_push(int fd, weir::wire::durability tier) {
  const std::string payload = "a record";
  const auto frame = weir::wire::encode_frame(
      weir::wire::message_type::push, tier,
      weir::byte_span(reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()));
  REQUIRE(::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(frame.size()));
}

/// Bytes the server has sent so far, without waiting.
ssize_t pending_bytes(int fd) {
  char buf[64];
  return ::recv(fd, buf, sizeof buf, MSG_DONTWAIT | MSG_PEEK);
}

/// Waits (bounded) for the server's next bytes or its close; what recv returned.
ssize_t next_reply(int fd, std::string& got) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 10'000) != 1) return -1;
  char buf[64];
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  if (n > 0) got.assign(buf, static_cast<std::size_t>(n));
  return n;
}

std::vector<nlohmann::json> bench_results(const std::string& out) {
  std::vector<nlohmann::json> results;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind("BENCH: ", 0) == 0) results.push_back(nlohmann::json::parse(line.substr(7)));
  return results;
}

/// One short round of `yaml` (a scenario written to the test's directory).
std::vector<nlohmann::json> run_scenario_text(const temp_dir& dir, const std::string& yaml,
                                              std::vector<std::string> extra = {}) {
  const auto path = dir.path() / "scenario.yaml";
  std::ofstream(path) << yaml;
  std::vector<std::string> args{"run", path.string(), "--repeat", "1", "--workdir", (dir.path() / "work").string(),
                                "--deadline", "100"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = weir::test::run_binary(weir::test::binary("weir-bench"), args, dir.path(), {},
                                        std::chrono::seconds(120));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("warning") == std::string::npos);
  auto results = bench_results(r.out);
  REQUIRE(!results.empty());
  return results;
}

}  // namespace

TEST_CASE("weir-bench: the minimal server acks a Durable push only after the fdatasync that covers it",
          "[bench]") {
  temp_dir dir;
  auto io = std::make_shared<weir::test::faulty_file_io>();
  int fd = -1;
  std::atomic<int> acks_seen_inside_sync{0};
  io->during_sync = [&] {
    // The record is written; the sync has not returned: no ack may be out yet.
    if (pending_bytes(fd) > 0) ++acks_seen_inside_sync;
  };
  weir::bench::minimal_server server(dir.path().string(), io);
  fd = connect_to(server.socket_path());
  std::string reply;
  for (int i = 0; i < 20; ++i) {
    const int syncs_before = io->syncs_done;
    send_push(fd, weir::wire::durability::durable);
    REQUIRE(next_reply(fd, reply) > 0);
    CHECK(io->syncs_done > syncs_before);  // the ack came after a sync returned
  }
  CHECK(io->syncs_done >= 1);
  CHECK(acks_seen_inside_sync == 0);
  CHECK(server.records_per_fsync() >= 1);

  // A Buffered push is acked after its write alone.
  const int syncs_before = io->syncs_done;
  const int writes_before = io->writes;
  send_push(fd, weir::wire::durability::buffered);
  REQUIRE(next_reply(fd, reply) > 0);
  CHECK(io->writes > writes_before);
  CHECK(io->syncs_done == syncs_before);
  ::close(fd);
}

TEST_CASE("weir-bench: a failed fdatasync in the minimal server acks nothing and closes its producers", "[bench]") {
  temp_dir dir;
  auto io = std::make_shared<weir::test::faulty_file_io>();
  weir::bench::minimal_server server(dir.path().string(), io);
  const int fd = connect_to(server.socket_path());
  io->fail_next_sync = EIO;
  send_push(fd, weir::wire::durability::durable);
  std::string reply;
  CHECK(next_reply(fd, reply) == 0);  // closed, with no ack before the close
  CHECK(reply.empty());
  CHECK(server.failed());
  ::close(fd);
}

TEST_CASE("weir-bench: a scenario file with a mistake is refused with a message naming the key", "[bench]") {
  const std::string good_load = "load:\n  producers: 2\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"name: x\nbaselin: fsync\n" + good_load, "baselin: not a key here"},
      {"name: x\nload:\n  producer: 2\n", "load.producer: not a key here"},
      {"name: x\nload:\n  producers: lots\n", "load.producers: expected a whole number, got lots"},
      {"name: x\nload:\n  payload_bytes: [64, big]\n", "load.payload_bytes: expected a whole number or a list"},
      {"name: x\nload:\n  durability: maybe\n", "load.durability: 'maybe' is not one of"},
      {"name: x\nmeasure: speed\n" + good_load, "measure: 'speed' is not one of ingest"},
      {"name: x\nbaseline: magic\n" + good_load, "baseline: 'magic' is not one of fsync"},
      {"name: x\nmeasure: latency\ndaemon:\n  sink.type: http\n" + good_load, "load.rate: measure latency needs a rate"},
      {"name: x\nendpoint:\n  delay_ms: 1\n" + good_load, "daemon.sink.type: an endpoint"},
      {"name: x\nendpoint:\n  tcp_nodelay: sometimes\n" + good_load, "endpoint.tcp_nodelay: expected true or false"},
      {"name: x\nload:\n  backlog_mib: 100\n", "load.backlog_mib: only a recovery scenario"},
      {"name: x\nload:\n  producers: 0\n", "load.producers: expected 1 to 1024"},
      {"name: x\nload:\n  seconds: -1\n", "load.seconds: expected more than 0"},
      {"name: x\ncluster:\n  nodes: 1\n" + good_load, "cluster.nodes: expected 2 to 9"},
      {"name: x\nbaseline: no_outage\n" + good_load, "baseline: no_outage is the baseline of measure outage"},
      {"name: x\nsample_seconds: 0\n" + good_load, "sample_seconds: expected 0.1 or more"},
      {"name: x\nmeasure: latency\ndaemon:\n  sink.type: http\n  sink.http.format: ndjson\nload:\n  rate: 5\n",
       "daemon.sink.http.format: measure latency needs raw"},
      {"name: x\nload:\n  rate: 5\n  pipeline: 4\n", "load.pipeline: a paced load"},
      {"description: no name\n" + good_load, "name: missing"},
  };
  temp_dir dir;
  const auto path = (dir.path() / "bad.yaml").string();
  int refused = 0;
  for (const auto& [text, expected] : cases) {
    std::ofstream(path) << text;
    INFO(text);
    try {
      weir::bench::load_scenario(path);
      FAIL("accepted");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()).find(path + ": " + expected) != std::string::npos);
      INFO(e.what());
      ++refused;
    }
  }
  CHECK(refused == static_cast<int>(cases.size()));

  // The command line says the same, and runs nothing.
  std::ofstream(path) << cases[2].first;
  const auto r = weir::test::run_binary(weir::test::binary("weir-bench"), {"run", path}, dir.path());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("load.producers: expected a whole number, got lots") != std::string::npos);
  CHECK(r.out.find("BENCH") == std::string::npos);
}

TEST_CASE("weir-bench: list names every scenario in bench/scenarios and each one loads", "[bench]") {
  const auto r = weir::test::run_binary(weir::test::binary("weir-bench"), {"list"}, weir::test::source_dir());
  REQUIRE(r.exit_code == 0);
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(weir::test::source_dir() / "bench/scenarios")) {
    if (e.path().extension() != ".yaml") continue;
    const auto sc = weir::bench::load_scenario(e.path().string());
    INFO(e.path());
    CHECK(sc.name == e.path().stem().string());  // run takes the name for the file
    CHECK(!sc.description.empty());
    CHECK(r.out.find(sc.name + " ") != std::string::npos);
    ++files;
  }
  CHECK(files >= 20);
  // Unknown names are refused before anything runs.
  const auto unknown = weir::test::run_binary(weir::test::binary("weir-bench"), {"run", "no-such-scenario"},
                                              weir::test::source_dir());
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err.find("no scenario no-such-scenario") != std::string::npos);
}

TEST_CASE("weir-bench: an outage round keeps acking while the sink refuses and catches up after", "[live][bench]") {
  temp_dir dir;
  const auto results = run_scenario_text(dir, R"(name: outage-short
daemon:
  sink.type: http
  sink.http.format: ndjson
  sink.retry.max_ms: 200
endpoint:
  delay_ms: 0
outage_seconds: 1
load:
  producers: 2
  durability: durable
  batch: 16
  seconds: 1.5
measure: outage
baseline: no_outage
)");
  const auto& j = results.front();
  CHECK(j.at("measure") == "outage");
  CHECK(j.at("refused") == 0);
  CHECK(j.at("records").get<double>() > 0);
  CHECK(j.at("records_per_s").get<double>() > 0);
  CHECK(j.at("baseline_records_per_s").get<double>() > 0);  // the same load without the outage
  CHECK(j.at("sink_refusals").get<double>() > 0);  // the outage happened
  CHECK(j.at("catch_up_s").get<double>() >= 0);
  CHECK(j.at("records_per_commit").get<double>() >= 1);
}

TEST_CASE("weir-bench: a backlog round holds the load back from the sink then delivers all of it after a restart",
          "[live][bench]") {
  temp_dir dir;
  const auto results = run_scenario_text(dir, R"(name: backlog-short
daemon:
  ingest.shards: 2
  sink.type: sqlite
load:
  producers: 2
  durability: durable
  batch: 64
  seconds: 0.5
measure: backlog
baseline: sqlite_bulk
)");
  const auto& j = results.front();
  CHECK(j.at("measure") == "backlog");
  CHECK(j.at("refused") == 0);
  CHECK(j.at("records").get<double>() > 0);
  // The round refuses a first daemon that delivered anything, and waits for
  // the restarted one's own commits to count every acked record.
  CHECK(j.at("records_per_commit").get<double>() >= 1);
  CHECK(j.at("records_per_fsync").get<double>() >= 1);  // the load was synced by the first daemon
  CHECK(j.at("startup_s").get<double>() > 0);
  CHECK(j.at("catch_up_s").get<double>() > 0);
  CHECK(j.at("records_per_s").get<double>() > 0);
  CHECK(j.at("ratio").get<double>() > 0);
}

TEST_CASE("weir-bench: a latency round paces stamped records and times their arrival at the sink", "[live][bench]") {
  temp_dir dir;
  const auto results = run_scenario_text(dir, R"(name: latency-short
daemon:
  sink.type: http
load:
  producers: 1
  rate: 100
  seconds: 2
measure: latency
baseline: fsync_post
)");
  const auto& j = results.front();
  CHECK(j.at("measure") == "latency");
  // Paced: at most about 100 records a second, not as many as the daemon
  // can take (a slow machine sends fewer: one frame is in flight).
  CHECK(j.at("records").get<double>() >= 3);
  CHECK(j.at("records").get<double>() <= 210);
  CHECK(j.at("delivery_p50_us").get<double>() > 0);
  CHECK(j.at("baseline_p50_us").get<double>() > 0);
  CHECK(j.at("ratio").get<double>() > 0);
}

TEST_CASE("weir-bench: a sustained round samples throughput and fdatasync time and memory", "[live][bench]") {
  temp_dir dir;
  const auto results = run_scenario_text(dir, R"(name: sustained-short
daemon:
  sink.type: noop
load:
  producers: 4
  durability: durable
  seconds: 3.5
  warmup_seconds: 0.2
measure: sustained
sample_seconds: 1
)");
  const auto& j = results.front();
  REQUIRE(j.at("series").size() == 1);  // one round
  const auto& series = j.at("series")[0];
  CHECK(series.size() >= 3);
  // A point whose second saw no fdatasync return (a stalled disk) is a
  // true sample; most must show the load.
  int with_records = 0, with_syncs = 0, with_memory = 0;
  for (const auto& p : series) {
    with_records += p.at("records_per_s").get<double>() > 0;
    with_syncs += p.at("fsync_ms").get<double>() > 0;
    with_memory += p.at("rss_mib").get<double>() > 1;
    CHECK(p.at("t_s").get<double>() > 0);
  }
  CHECK(with_records >= static_cast<int>(series.size()) - 1);
  CHECK(with_syncs >= static_cast<int>(series.size()) - 1);
  CHECK(with_memory == static_cast<int>(series.size()));
  CHECK(j.at("peak_rss_mib").get<double>() > 1);
  // Its CPU time per record: counted from the daemon's own metrics, with
  // the delivery of the same records.
  CHECK(j.at("daemon_cpu_us_per_record").get<double>() > 0);
}

TEST_CASE("weir-bench: a startup round and a recovery round against backlog sizes report their times",
          "[live][bench]") {
  temp_dir dir;
  const auto startup = run_scenario_text(dir, R"(name: startup-short
daemon:
  sink.type: noop
load:
  seconds: 0.3
measure: startup
baseline: none
)");
  CHECK(startup.front().at("startup_s").get<double>() > 0);
  CHECK(startup.front().at("idle_rss_mib").get<double>() > 1);

  const auto recovery = run_scenario_text(dir, R"(name: recovery-sizes
daemon:
  sink.type: http
  sink.http.url: http://127.0.0.1:9/
load:
  producers: 2
  durability: buffered
  payload_bytes: 1024
  batch: 64
  backlog_mib: [4, 16]
measure: recovery
baseline: none
)");
  REQUIRE(recovery.size() == 2);  // one result per backlog size
  for (const auto& j : recovery) {
    const double target = j.at("backlog_mib_target").get<double>() * (1 << 20);
    INFO(j.dump());
    // The load stopped at the size, not at a time (records are 1040 bytes in the WAB).
    CHECK(j.at("backlog_bytes").get<double>() >= target * 0.9);
    CHECK(j.at("backlog_bytes").get<double>() <= target * 1.1);
    CHECK(j.at("startup_s").get<double>() > 0);
  }
}

TEST_CASE("weir-bench: the Redis peer runs with appendfsync always beside the daemon", "[live][bench]") {
  temp_dir dir;
  const auto results = run_scenario_text(dir, R"(name: redis-short
daemon:
  sink.type: noop
load:
  producers: 2
  pipeline: 8
  seconds: 0.5
  warmup_seconds: 0.1
baseline: redis_lpush
)");
  const auto& j = results.front();
  CHECK(j.at("baseline") == "redis_lpush");
  CHECK(j.at("baseline_records_per_s").get<double>() > 0);
  CHECK(j.at("ratio").get<double>() > 0);
}

TEST_CASE("weir-bench: report writes Markdown tables and a PNG chart from JSON lines", "[bench]") {
  temp_dir dir;
  const auto results = dir.path() / "results.jsonl";
  {
    std::ofstream out(results);
    out << R"J({"scenario":"durable-16","measure":"ingest","ratio":0.8,"ratio_min":0.7,"ratio_max":0.9,"records_per_s":900,"daemon_cpu_us_per_record":12.345,"baseline":"fsync","machine":{"cpu_model":"Test CPU","cores":2,"cpus_allowed":"0-1","kernel":"Linux 6","wab_filesystem":"ext4","wab_device":"/dev/x (1:2)","git_commit":"abc"}})J" "\n";
    out << "not a result\n";
    out << R"J(BENCH: {"scenario":"sustained","measure":"sustained","ratio":1.5,"seconds":10,"series":[[{"t_s":5,"records_per_s":1000,"fsync_ms":0.5,"rss_mib":20},{"t_s":10,"records_per_s":800,"fsync_ms":0.9,"rss_mib":21}]]})J" "\n";
    out << R"J({"scenario":"delivery-latency","measure":"latency","ratio":0.2,"delivery_p50_us":5000,"delivery_p99_us":9000,"baseline_p50_us":1000,"baseline":"fsync_post"})J" "\n";
    out << R"J({"scenario":"startup-idle","measure":"startup","baseline":"none","startup_s":0.05,"idle_rss_mib":16})J" "\n";
  }
  const auto md = dir.path() / "r.md", png = dir.path() / "r.png";
  const auto r = weir::test::run_binary(weir::test::binary("weir-bench"),
                                        {"report", results.string(), "--md", md.string(), "--png", png.string()},
                                        dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::ifstream md_in(md);
  const std::string tables((std::istreambuf_iterator<char>(md_in)), std::istreambuf_iterator<char>());
  CHECK(tables.find("Measured on Test CPU, 2 cores (CPUs 0-1), Linux 6; WAB on ext4 /dev/x (1:2); weir abc.") !=
        std::string::npos);
  CHECK(tables.find("| durable-16 | ingest |") != std::string::npos);
  CHECK(tables.find("| 12.35 |\n") != std::string::npos);  // daemon CPU µs per record, last in its row
  CHECK(tables.find("0.80 (0.70–0.90)") != std::string::npos);
  CHECK(tables.find("| sustained | 1 | 10 | 2 | 800 |") != std::string::npos);
  CHECK(tables.find("| delivery-latency | latency |") != std::string::npos);
  CHECK(tables.find("| 5.00 | 9.00 | 1.00 |") != std::string::npos);
  CHECK(tables.find("| startup-idle | startup | 0 | 0.050 (0.050–0.050) | – | 16.0 |") != std::string::npos);
  std::ifstream png_in(png, std::ios::binary);
  const std::string image((std::istreambuf_iterator<char>(png_in)), std::istreambuf_iterator<char>());
  REQUIRE(image.size() > 1000);
  CHECK(image.substr(0, 8) == "\x89PNG\r\n\x1a\n");

  // Nothing to report is an error, not an empty table.
  std::ofstream(dir.path() / "empty.jsonl") << "nothing here\n";
  const auto empty = weir::test::run_binary(weir::test::binary("weir-bench"),
                                            {"report", (dir.path() / "empty.jsonl").string()}, dir.path());
  CHECK(empty.exit_code == 1);
}

TEST_CASE("weir-bench: a daemon that dies during the load fails the round instead of reporting a rate", "[live][bench]") {
  temp_dir dir;
  const auto admin = weir::test::free_tcp_port();
  weir::test::daemon_process d(dir.path(),
                               {"--set", "sink.type=noop", "--set", "admin.listen=127.0.0.1:" + std::to_string(admin)});
  REQUIRE(d.wait_ready());
  std::ofstream(dir.path() / "scenario.yaml") << R"(name: dies-midway
load:
  producers: 4
  durability: buffered
  seconds: 60
baseline: none
)";
  weir::test::run_result r;
  std::thread bench([&] {
    r = weir::test::run_binary(weir::test::binary("weir-bench"),
                               {"run", (dir.path() / "scenario.yaml").string(), "--socket", d.socket_path(), "--repeat",
                                "1", "--warmup", "0", "--workdir", (dir.path() / "work").string()},
                               dir.path(), {}, std::chrono::seconds(120));
  });
  // Killed once the load is well under way.
  const bool loaded = weir::test::eventually([&] {
    const auto body = weir::test::http_request(admin, "/metrics").body;
    const auto at = body.find("\nweir_records_ack_total{tier=\"buffered\"} ");
    return at != std::string::npos && std::stod(body.substr(body.find('}', at) + 2)) > 1000;
  }, std::chrono::seconds(30));
  d.stop(9);
  bench.join();
  REQUIRE(loaded);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("producers lost the daemon before the load ended") != std::string::npos);
  CHECK(bench_results(r.out).empty());
}
