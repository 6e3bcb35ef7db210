// Three real weir-server processes on loopback ports, each with its own data
// directory, all delivering into one SQLite file: Replicated acks, kill -9 of
// a node and the failover that delivers its replica, its rejoin, a frozen
// node (SIGSTOP), and record ids that never collide between nodes.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <regex>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "support/daemon_process.hpp"
#include "support/http_get.hpp"
#include "support/test_cluster.hpp"
#include "support/test_pki.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "weir/client.hpp"

using namespace weir;
using namespace weir::test;

namespace {

}  // namespace

TEST_CASE("cluster: only nodes whose certificate the cluster's CA signed can join", "[live][cluster][tls]") {
  cluster3 c;
  // Node 3's certificate names it, but comes from a CA of its own.
  const auto other = c.root / "other-ca";
  REQUIRE(run_binary(binary("weir-ctl"), {"cluster", "certs", "--out", other.string(), "--nodes", "3"}, c.root.path())
              .exit_code == 0);
  c.start(0);
  c.start(1);
  c.start(2, {"--set", "cluster.tls.cert=" + (other / "node3.pem").string(), "--set",
              "cluster.tls.key=" + (other / "node3.key").string(), "--set",
              "cluster.tls.ca=" + (other / "ca.pem").string()});
  const bool joined = eventually([&] {
    return cluster3::count(c.nodes[0]->log(), "cluster peer connected peer=" + c.listen(1)) >= 1 &&
           cluster3::count(c.nodes[1]->log(), "cluster peer connected peer=" + c.listen(0)) >= 1;
  });
  INFO(c.nodes[0]->log() + "\n---\n" + c.nodes[1]->log());
  REQUIRE(joined);
  CHECK(c.nodes[0]->log().find("certificate=weir-node-1") != std::string::npos);
  auto conn = c.connect(0);
  REQUIRE(eventually([&] { return conn.push(as_bytes("over TLS"), client::durability::replicated).acked; }));
  // The odd node never becomes a member, on either side; its Replicated
  // pushes find no peer and are refused; the members say why.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < deadline) {
    CHECK(cluster3::count(c.nodes[2]->log(), "cluster peer connected") == 0);
    CHECK(cluster3::count(c.nodes[0]->log() + c.nodes[1]->log(), "peer=" + c.listen(2) + " node=3") == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  CHECK_FALSE(c.connect(2).push(as_bytes("outsider"), client::durability::replicated).acked);
  CHECK(eventually([&] {
    return c.series(0, "weir_cluster_tls_handshake_failures_total{reason=\"bad_cert\"}") +
               c.series(1, "weir_cluster_tls_handshake_failures_total{reason=\"bad_cert\"}") +
               c.series(0, "weir_cluster_tls_handshake_failures_total{reason=\"aborted\"}") +
               c.series(1, "weir_cluster_tls_handshake_failures_total{reason=\"aborted\"}") >=
           1;
  }));
  for (auto& n : c.nodes) CHECK(n->stop() == 0);
}

TEST_CASE("cluster: a node whose start fails on a taken port never joins", "[live][cluster]") {
  cluster3 c;
  c.start(0);
  c.start(1);
  REQUIRE(eventually([&] { return cluster3::count(c.nodes[0]->log(), "cluster peer connected") >= 1; }));
  // Something else holds node 3's admin port.
  const int taken = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(c.admin[2]);
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(taken, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
  REQUIRE(::listen(taken, 1) == 0);
  c.launch(2);
  CHECK(c.nodes[2]->wait_exit() == 2);
  ::close(taken);
  INFO(c.nodes[2]->log());
  CHECK(c.nodes[2]->log().find("admin.listen") != std::string::npos);
  // It failed before joining: neither published nor dialled its peers, so
  // their view of it (and any failover of its replica) is untouched.
  CHECK(c.nodes[2]->log().find("cluster node listening") == std::string::npos);
  CHECK(c.nodes[2]->log().find("cluster peer connected") == std::string::npos);
  CHECK(c.nodes[0]->stop() == 0);
  CHECK(c.nodes[1]->stop() == 0);
}

TEST_CASE("cluster: a node started with another's cluster.node_id is named as a duplicate and not joined",
          "[live][cluster]") {
  cluster3 c;
  c.start(0);
  c.start(1);
  // Node 3's address, node 2's id and certificate (a copied machine).
  c.start(2, [&] {
    auto args = c.certificate_of(2);
    args.insert(args.end(), {"--set", "cluster.node_id=2"});
    return args;
  }());
  const auto said = [&](int i, const std::string& line) { return c.nodes[i]->log().find(line) != std::string::npos; };
  // Whichever of the two dials the other, the link is refused: the
  // certificate on the other end names the node itself.
  CHECK(eventually([&] {
    return said(1, "reason=wrong_name") || said(2, "reason=wrong_name");
  }));
  CHECK((said(1, "its certificate names this node, weir-node-2") || said(2, "its certificate names this node, weir-node-2")));
  CHECK(eventually([&] { return cluster3::count(c.nodes[0]->log(), "cluster peer connected") >= 1; }));
  CHECK_FALSE(said(1, "cluster peer connected peer=" + c.listen(2)));
  CHECK_FALSE(said(2, "cluster peer connected peer=" + c.listen(1)));
  for (auto& n : c.nodes) CHECK(n->stop() == 0);
}

TEST_CASE("cluster: every Replicated ack survives kill -9 of its node and the node rejoins", "[live][cluster]") {
  cluster3 c;
  c.start_all();
  // Node 2 cannot deliver (its sink is unreachable): what it acks stays in its
  // WAB and its peers' replicas until a survivor fails it over.
  c.start(1, {"--set", "sink.type=http", "--set", "sink.http.url=http://127.0.0.1:1/"});
  REQUIRE(eventually([&] { return cluster3::count(c.nodes[1]->log(), "cluster peer connected") >= 2; }));

  // Two producers per node push Replicated records while node 2 is killed
  // with kill -9 in the middle of the load. What a producer saw acked is
  // what the sink must end up holding.
  std::mutex mutex;
  std::set<std::string> acked;
  std::atomic<bool> stop{false};
  std::atomic<int> refused{0};
  std::vector<std::thread> producers;
  for (int i = 0; i < 3; ++i)
    for (int t = 0; t < 2; ++t)
      producers.emplace_back([&, i, t] {
        try {
          auto conn = c.connect(i);
          for (int k = 0; !stop; ++k) {
            const std::string p = "node" + std::to_string(i + 1) + "-" + std::to_string(t) + "-" + std::to_string(k);
            if (conn.push(as_bytes(p), client::durability::replicated).acked) {
              std::lock_guard<std::mutex> guard(mutex);
              acked.insert(p);
            } else {
              ++refused;
            }
          }
        } catch (const client::client_error&) {
          // node 2's producers: their connection died with it
        }
      });
  auto acked_count = [&] {
    std::lock_guard<std::mutex> guard(mutex);
    return acked.size();
  };
  // Node 2 itself has acked some when it dies (after its restart above it
  // may take a moment before its peers hold its records).
  auto acked_by_node2 = [&] {
    std::lock_guard<std::mutex> guard(mutex);
    return std::count_if(acked.begin(), acked.end(), [](const std::string& p) { return p.rfind("node2-", 0) == 0; });
  };
  REQUIRE(eventually([&] { return acked_count() >= 300 && acked_by_node2() >= 50; }));
  ::kill(c.nodes[1]->pid(), SIGKILL);
  const auto killed_at = std::chrono::steady_clock::now();
  c.nodes[1]->wait_exit();
  const auto at_kill = acked_count();
  REQUIRE(eventually([&] { return acked_count() >= at_kill + 200; }));  // the survivors go on acking
  stop = true;
  for (auto& t : producers) t.join();
  INFO("acked " << acked.size() << ", refused " << refused.load());

  // Within failover_after_ms (1 s) and a few seconds, the sink holds every
  // record any node acked, node 2's included, delivered by one survivor.
  // (The bound is generous for a loaded or sanitizer build; it is far below
  // what waiting for node 2 to come back would take: it never does here.)
  const bool delivered = eventually([&] { return sink_holds_all(c.sink(), acked); }, std::chrono::seconds(60));
  const auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  INFO("not in the sink: " << missing(c.sink(), acked));
  INFO("node 1 log:\n" << c.nodes[0]->log() << "\nnode 3 log:\n" << c.nodes[2]->log());
  REQUIRE(delivered);
  INFO("delivered " << took << " s after the kill");
  CHECK(took < 1.0 + 14.0);
  // Exactly one survivor delivers each of node 2's shards.
  const std::string logs = c.nodes[0]->log() + c.nodes[2]->log();
  for (int shard = 0; shard < 2; ++shard) {
    INFO("shard " << shard);
    CHECK(cluster3::count(logs, "failover: this node delivers a failed node's replica origin=2 shard=" +
                                    std::to_string(shard) + " ") == 1);
  }
  // Each shard goes to the survivor with the furthest copy of it (the lower
  // node id on a tie), so the two shards may have two owners. An owner says
  // so in its metrics, its status and weir-ctl; a survivor that owns none
  // does not.
  std::vector<int> owners;
  for (int i : {0, 2})
    if (cluster3::count(c.nodes[i]->log(), "failover: this node delivers a failed node's replica origin=2") > 0)
      owners.push_back(i);
  REQUIRE_FALSE(owners.empty());
  const int owner = owners.front();
  for (int i : {0, 2}) {
    INFO("node " << i + 1);
    const bool owns = std::find(owners.begin(), owners.end(), i) != owners.end();
    CHECK(c.series(i, "weir_failover_active{origin=\"2\"}") == (owns ? 1 : 0));
  }
  const auto status = nlohmann::json::parse(http_request(c.admin[owner], "/api/v1/status").body);
  CHECK(status["cluster"]["failover_origins"] == nlohmann::json::array({2}));
  const auto shown = c.ctl_cluster_status(owner);
  INFO(shown.out << shown.err);
  CHECK(shown.exit_code == 0);
  CHECK(shown.out.find("this node delivers its replica") != std::string::npos);
  {  // and so does its dashboard, in a real browser
    temp_dir profile;
    std::string dom;
    CHECK(headless_chromium("http://127.0.0.1:" + std::to_string(c.admin[owner]) + "/", profile.path().string(), dom) == 0);
    std::smatch m;
    REQUIRE(std::regex_search(dom, m, std::regex(R"re(id="cluster">([^<]*)<)re")));
    INFO("cluster line: " << m[1]);
    CHECK(m[1].str().find("node 2 down (FAILOVER: delivering its records here)") != std::string::npos);
  }
  // Every Replicated record a survivor acked is counted as acked there.
  for (int i : {0, 2}) {
    const auto prefix = "node" + std::to_string(i + 1) + "-";
    const auto mine = std::count_if(acked.begin(), acked.end(), [&](const std::string& p) { return p.rfind(prefix, 0) == 0; });
    CHECK(c.series(i, "weir_replication_acks_total{outcome=\"acked\"}") == static_cast<double>(mine));
  }
  const auto node2_acked =
      std::count_if(acked.begin(), acked.end(), [](const std::string& p) { return p.rfind("node2-", 0) == 0; });
  REQUIRE(node2_acked > 0);

  // Node 2 comes back with its own sink, takes its records back and delivers
  // its backlog; duplicates collapse on the record key, nothing is lost.
  c.start(1);
  REQUIRE(eventually([&] {
    return cluster3::count(c.nodes[0]->log() + c.nodes[2]->log(), "failover ends") >= 1;
  }));
  for (int i : owners) CHECK(eventually([&] { return c.series(i, "weir_failover_active{origin=\"2\"}") == 0; }));
  // (A node that has no peer up yet refuses Replicated pushes at once.)
  REQUIRE(eventually([&] { return cluster3::count(c.nodes[1]->log(), "cluster peer connected") >= 2; }));
  auto back = c.connect(1);
  REQUIRE(eventually([&] { return back.push(as_bytes("after the rejoin"), client::durability::replicated).acked; }));
  acked.insert("after the rejoin");
  REQUIRE(eventually([&] { return sink_holds_all(c.sink(), acked); }));
  for (const auto& [payload, times] : sink_payloads(c.sink())) CHECK(times == 1);
  // Node 2 delivered its own backlog: everything it had acked before the
  // kill went through its own sink commits (the survivor's copies collapse
  // on the same keys), and nothing of its WAB waits any more.
  CHECK(eventually([&] {
    const auto scrape = c.scrape(1);
    return scrape_series(scrape, "weir_sink_commit_records_total{outcome=\"committed\",sink=\"default\"}") >=
               static_cast<double>(node2_acked) &&
           scrape_series(scrape, "weir_drain_lag_records{shard=\"0\",sink=\"default\"}") == 0 &&
           scrape_series(scrape, "weir_drain_lag_records{shard=\"1\",sink=\"default\"}") == 0;
  }));
  for (auto& n : c.nodes) CHECK(n->stop() == 0);
}

TEST_CASE("cluster: a frozen node makes Replicated pushes Nack within the timeout and Durable ones go on",
          "[live][cluster]") {
  cluster3 c(3);  // every node must hold a Replicated record
  const auto admin = c.admin[0];
  c.start_all();
  auto conn = c.connect(0);
  REQUIRE(conn.push(as_bytes("all three up"), client::durability::replicated).acked);

  REQUIRE(c.nodes[2]->freeze());
  const auto started = std::chrono::steady_clock::now();
  const auto frozen = conn.push(as_bytes("one peer frozen"), client::durability::replicated);
  const auto waited = std::chrono::steady_clock::now() - started;
  CHECK_FALSE(frozen.acked);
  CHECK(frozen.nack == 0x06);  // InternalError: retryable
  CHECK(waited < std::chrono::seconds(5));  // the timeout is 1.5 s: never a hang
  CHECK(conn.push(as_bytes("durable while frozen"), client::durability::durable).acked);
  CHECK(conn.push(as_bytes("buffered while frozen"), client::durability::buffered).acked);
  // The metrics say so: the frozen peer is suspect and its copy lags by the
  // records written since; promtool accepts the scrape.
  std::string scrape;
  CHECK(eventually([&] {
    scrape = http_request(admin, "/metrics").body;
    return scrape.find("weir_cluster_peers{state=\"suspect\"} 1") != std::string::npos &&
           scrape.find("weir_replication_lag_records{peer=\"3\"} 0") == std::string::npos &&
           scrape.find("weir_replication_lag_records{peer=\"3\"}") != std::string::npos;
  }));
  CHECK(scrape.find("weir_replication_acks_total{outcome=\"refused\"} 1") != std::string::npos);
  {
    std::ofstream(c.root / "scrape.txt") << scrape;
    const auto check = run_binary("/bin/sh", {"-c", "promtool check metrics < scrape.txt"}, c.root.path());
    INFO(check.out << check.err);
    CHECK(check.exit_code == 0);
  }

  c.nodes[2]->thaw();
  REQUIRE(eventually([&] { return conn.push(as_bytes("healed"), client::durability::replicated).acked; }));
  for (auto& n : c.nodes) CHECK(n->stop() == 0);
}

TEST_CASE("cluster: the same record pushed to two nodes gets two record ids", "[live][cluster]") {
  cluster3 c;
  c.start_all();
  auto a = c.connect(0).push_tracked(as_bytes("same bytes"), client::durability::replicated);
  auto b = c.connect(1).push_tracked(as_bytes("same bytes"), client::durability::replicated);
  REQUIRE(a.acked);
  REQUIRE(b.acked);
  CHECK(a.segment.rfind("node_1/shard_", 0) == 0);
  CHECK(b.segment.rfind("node_2/shard_", 0) == 0);
  CHECK(a.record_id_hex != b.record_id_hex);
  // weir-ctl dump, offline, shows node 2's record with the id it was acked
  // with: the node id comes from the data directory, not from an option.
  const auto dumped = run_binary(binary("weir-ctl"),
                                 {"--data-dir", (c.dir(1) / "var").string(), "dump", b.segment.substr(b.segment.find('/') + 1),
                                  "--format", "json"},
                                 c.root.path());
  INFO(dumped.out << dumped.err);
  REQUIRE(dumped.exit_code == 0);
  bool found = false;
  for (const auto& r : nlohmann::json::parse(dumped.out))
    if (r["index"] == b.index) {
      found = true;
      CHECK(r["segment"] == b.segment);
      CHECK(r["record_id"] == b.record_id_hex);
    }
  CHECK(found);
  // Both reach the sink, each under its own id and node.
  REQUIRE(eventually([&] { return sink_payloads(c.sink())["same bytes"] == 2; }));
  for (auto& n : c.nodes) CHECK(n->stop() == 0);
}

TEST_CASE("cluster: a Replicated PushBatch is acked record by record once a peer holds it", "[live][cluster]") {
  cluster3 c;
  c.start_all();
  const std::vector<std::string> payloads{"batch one", "batch two", "batch three"};
  std::vector<std::span<const std::uint8_t>> records;
  for (const auto& p : payloads) records.push_back(as_bytes(p));
  auto conn = c.connect(0);
  REQUIRE(eventually([&] { return c.series(0, "weir_cluster_peers{state=\"up\"}") == 2; }));
  const auto answer = conn.push_batch(records, client::durability::replicated);
  REQUIRE(answer.all_accepted());
  CHECK(answer.accepted.size() == 3);
  CHECK(c.series(0, "weir_replication_acks_total{outcome=\"acked\"}") == 3);
  // The status's ack latency counts the Replicated tier (sampled every second).
  CHECK(eventually([&] {
    const auto status = nlohmann::json::parse(http_request(c.admin[0], "/api/v1/status").body);
    return status.at("ack_latency_ms").at("60s").at("p50").get<double>() > 0;
  }));
  // With every peer gone, the same batch is refused as a whole, every bit clear.
  for (int i : {1, 2}) CHECK(c.nodes[i]->stop() == 0);
  REQUIRE(eventually([&] { return c.series(0, "weir_cluster_peers{state=\"up\"}") == 0; }));
  const auto alone = conn.push_batch(records, client::durability::replicated);
  CHECK_FALSE(alone.nack.has_value());
  CHECK(alone.accepted == std::vector<bool>(3, false));
  CHECK(c.series(0, "weir_replication_acks_total{outcome=\"refused\"}") == 3);
  // Refused as it came, with no push waiting when the peers went: still said
  // (the line follows the refusal, which leaves first).
  CHECK(eventually([&] {
    const auto log = c.nodes[0]->log();
    return log.find("Replicated pushes refused shard=") != std::string::npos &&
           log.find("too few peers are up") != std::string::npos;
  }));
  // A refusal never means "not stored": the refused batch is in the node's own WAB
  // and is delivered too, so each payload reaches the sink twice, once per push.
  std::map<std::string, int> rows;
  const bool both_delivered = eventually([&] {
    rows = sink_payloads(c.sink());
    return rows["batch one"] >= 2 && rows["batch two"] >= 2 && rows["batch three"] >= 2;
  });
  INFO("batch one " << rows["batch one"] << ", two " << rows["batch two"] << ", three " << rows["batch three"]);
  REQUIRE(both_delivered);
  // Nothing else delivers them: no peer failed over node 1's copy.
  CHECK(rows == std::map<std::string, int>{{"batch one", 2}, {"batch two", 2}, {"batch three", 2}});
  CHECK(c.nodes[0]->stop() == 0);
}
