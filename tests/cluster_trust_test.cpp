// Who can reach a cluster port and what it can do there: only a node whose
// certificate the cluster's CA signed for its own id is a member, and a
// stranger at the port (bare TCP, idle connections, no or a foreign
// certificate, oversized or forbidden frames) costs the members nothing.
// Real weir-server processes on loopback, certificates from weir-ctl.
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "support/raw_peer.hpp"
#include "support/test_cluster.hpp"
#include "support/tls_probe.hpp"

using namespace weir;
using namespace weir::test;

namespace {

/// The 32 bytes of a BASP frame header: `operation` and a payload length.
std::string basp_header(std::uint8_t operation, std::uint32_t length) {
  std::string h(32, '\0');
  h[0] = static_cast<char>(operation);
  for (int i = 0; i < 4; ++i) h[4 + i] = static_cast<char>((length >> (24 - 8 * i)) & 0xff);
  return h;
}

/// Whether the node closed `fd` within `limit` (a read sees the end, or a reset).
bool closed_within(int fd, std::chrono::seconds limit) {
  timeval tv{static_cast<time_t>(limit.count()), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[256];
  for (;;) {
    const auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0) return true;
    if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK;
  }
}

tls_probe_options as_node(const cluster3& c, int id, std::string send = "") {
  const auto base = (c.certs() / ("node" + std::to_string(id))).string();
  tls_probe_options o;
  o.ca_file = (c.certs() / "ca.pem").string();
  o.cert_file = base + ".pem";
  o.key_file = base + ".key";
  o.send = std::move(send);
  return o;
}

}  // namespace

TEST_CASE("cluster: a node does not start without cluster.tls on any address", "[live][cluster][tls]") {
  temp_dir dir;
  const auto run = run_binary(binary("weir-server"),
                              {"--check-config", "--set", "cluster.node_id=1", "--set", "cluster.listen=127.0.0.1:7101"},
                              dir.path());
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("cluster.tls.cert") != std::string::npos);
  CHECK(run.err.find("weir-ctl cluster certs") != std::string::npos);
}

TEST_CASE("cluster: a node's certificate must name its own cluster.node_id", "[live][cluster][tls]") {
  cluster3 c;
  auto args = c.certificate_of(2);  // node 1 with node 2's certificate
  c.launch(0, args);
  CHECK(c.nodes[0]->wait_exit() == 2);
  INFO(c.nodes[0]->log());
  CHECK(c.nodes[0]->log().find("names weir-node-2, expected weir-node-1") != std::string::npos);
}

TEST_CASE("cluster: strangers at the cluster port cost the members no link and no push", "[live][cluster][tls]") {
  cluster3 c;
  const std::vector<std::string> strict{"--set", "cluster.handshake_timeout_ms=1000"};
  c.start(0, strict);
  c.start(1, strict);
  REQUIRE(eventually([&] { return cluster3::count(c.nodes[0]->log(), "cluster peer connected") >= 1; }));

  // An honest producer of Replicated records on node 1 the whole time.
  std::atomic<bool> stop{false};
  std::atomic<int> acked{0}, refused{0};
  std::thread producer([&] {
    auto conn = c.connect(0);
    for (int k = 0; !stop; ++k) {
      const std::string payload = std::to_string(k);
      (conn.push(as_bytes(payload), client::durability::replicated).acked ? acked : refused)++;
    }
  });
  REQUIRE(eventually([&] { return acked.load() > 100; }));

  // Idle connections to both nodes' cluster ports, held open.
  std::vector<int> idle;
  for (int i = 0; i < 150; ++i)
    for (int n = 0; n < 2; ++n) idle.push_back(tcp_connect(c.ports[n]));
  // Then, for 4 s, 20 strangers a second at node 1's port: bare connects,
  // plaintext (a BASP header announcing 4 GiB), TLS without a certificate,
  // and a certificate of another CA.
  const auto other = c.root / "other-ca";
  REQUIRE(run_binary(binary("weir-ctl"), {"cluster", "certs", "--out", other.string(), "--nodes", "2"}, c.root.path())
              .exit_code == 0);
  tls_probe_options foreign;
  foreign.cert_file = (other / "node2.pem").string();
  foreign.key_file = (other / "node2.key").string();
  int strangers = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(4);
  while (std::chrono::steady_clock::now() < until) {
    switch (strangers++ % 4) {
      case 0:
        ::close(tcp_connect(c.ports[0]));
        break;
      case 1: {
        const int fd = tcp_connect(c.ports[0]);
        const auto h = basp_header(1, 0xffffffffu);
        CHECK(::send(fd, h.data(), h.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(h.size()));
        CHECK(closed_within(fd, std::chrono::seconds(5)));
        ::close(fd);
        break;
      }
      case 2:  // (TLS 1.3: the client may see its side finish; the node closes it)
        probe_tls(c.ports[0], {});
        break;
      case 3:
        probe_tls(c.ports[0], foreign);
        break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Every idle connection was closed by its node, unauthenticated after 1 s.
  int closed = 0;
  for (int fd : idle) {
    closed += closed_within(fd, std::chrono::seconds(5));
    ::close(fd);
  }
  CHECK(closed == static_cast<int>(idle.size()));
  const int acked_during = acked.load();
  stop = true;
  producer.join();

  INFO(c.nodes[0]->log() + "\n---\n" + c.nodes[1]->log());
  CHECK(strangers >= 8);  // every kind, twice (a sanitizer build is slower)
  CHECK(refused.load() == 0);
  CHECK(acked_during > 100);
  for (int n = 0; n < 2; ++n) {
    CHECK(cluster3::count(c.nodes[n]->log(), "cluster peer lost") == 0);
    CHECK(cluster3::count(c.nodes[n]->log(), "cluster peer not up") == 0);
    CHECK(cluster3::count(c.nodes[n]->log(), "cluster peer connected") == 1);
  }
  // The members said what happened, by reason.
  const auto failures = [&](int n, const std::string& reason) {
    std::string series = "weir_cluster_tls_handshake_failures_total{reason=\"";
    series.append(reason).append("\"}");
    return c.series(n, series);
  };
  CHECK(failures(0, "timeout") + failures(0, "crowded") + failures(1, "timeout") + failures(1, "crowded") >= 300);
  CHECK(failures(0, "protocol") >= 1);
  CHECK(failures(0, "no_client_cert") + failures(0, "aborted") >= 1);
  CHECK(failures(0, "bad_cert") >= 1);
  CHECK(c.series(0, "weir_cluster_links") == 1);
  // weir-ctl cluster status says it too.
  const auto shown = c.ctl_cluster_status(0);
  INFO(shown.out << shown.err);
  CHECK(shown.out.find("links: 1 open; handshakes refused: ") != std::string::npos);
  CHECK(shown.out.find("bad_cert ") != std::string::npos);
  for (int n = 0; n < 2; ++n) CHECK(c.nodes[n]->stop() == 0);
}

TEST_CASE("cluster: a link of a node that is no member cannot make the node allocate or speak for others",
          "[live][cluster][tls]") {
  cluster3 c;
  c.start(0, {"--set", "cluster.max_message_bytes=32MiB", "--set", "cluster.handshake_timeout_ms=1000"});
  // Node 4 holds a certificate of the cluster's CA, so its handshake
  // succeeds; what it then sends is judged before CAF reads it, and as a
  // node no member knows, its messages are small (CAF sizes a buffer by the
  // length a header announces).
  for (const std::uint32_t announced : {0xffffffffu, 20u << 20}) {
    const auto huge = probe_tls(c.ports[0], as_node(c, 4, basp_header(1, announced)));
    CHECK(huge.handshake_ok);
    CHECK(huge.closed_by_peer);
  }
  const auto routed = probe_tls(c.ports[0], as_node(c, 4, basp_header(3, 64)));
  CHECK(routed.handshake_ok);
  CHECK(routed.closed_by_peer);
  // A link that stays quiet goes once the handshake timeout has passed.
  const auto started = std::chrono::steady_clock::now();
  const auto quiet = probe_tls(c.ports[0], as_node(c, 4, basp_header(1, 64).substr(0, 4)));
  CHECK(quiet.closed_by_peer);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  INFO(c.nodes[0]->log());
  CHECK(c.series(0, "weir_cluster_links_cut_total{reason=\"too_large\"}") == 2);
  CHECK(c.series(0, "weir_cluster_links_cut_total{reason=\"forbidden\"}") == 1);
  CHECK(c.series(0, "weir_cluster_links_cut_total{reason=\"not_member\"}") == 1);
  // A line for the first; the others are counted into the next line (a burst is one line).
  CHECK(c.nodes[0]->log().find("a message of 4294967295 bytes, over the 2097152 bytes this link may send") !=
        std::string::npos);
  // The node is whole: it takes a Durable push and stops cleanly.
  CHECK(c.connect(0).push(as_bytes("still here"), client::durability::durable).acked);
  CHECK(c.nodes[0]->stop() == 0);
}

TEST_CASE("cluster: out of file descriptors the cluster port backs off instead of spinning", "[live][cluster]") {
  cluster3 c;
  c.start(0, {"--set", "wab.spare_segments=0"});  // no spare preparing, whose CPU would count here
  const auto pid = c.nodes[0]->pid();
  const auto in_use = open_files(pid);
  REQUIRE(set_open_file_limit(pid, in_use + 2));
  std::vector<int> waiting;
  for (int i = 0; i < 20; ++i) waiting.push_back(tcp_connect(c.ports[0]));
  const auto cpu_before = cpu_time(pid);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const auto cpu_used = cpu_time(pid) - cpu_before;
  INFO("CPU the node used in 2 s with accept failing: " << cpu_used.count() << " ms\n" << c.nodes[0]->log());
  CHECK(cpu_used < std::chrono::milliseconds(500));
  CHECK(cluster3::count(c.nodes[0]->log(), "accept failed; backing off listener=cluster") >= 1);
  REQUIRE(set_open_file_limit(pid, 4096));
  for (int fd : waiting) ::close(fd);
  CHECK(c.series(0, "weir_cluster_accept_errors_total") >= 1);
  CHECK(c.nodes[0]->stop() == 0);
}

TEST_CASE("cluster: a machine replaced with an empty disk under its old id loses nothing and repeats no id",
          "[live][cluster]") {
  cluster3 c;
  // No failover in this test: what the first life acked can reach the sink
  // only through the peers that hold its copies.
  const std::vector<std::string> patient{"--set", "cluster.failover_after_ms=600000"};
  c.start(0, patient);
  c.start(2, patient);
  // Node 2's first life cannot deliver: everything it acks stays in its WAB
  // and its peers' copies.
  c.start(1, {"--set", "sink.type=http", "--set", "sink.http.url=http://127.0.0.1:1/"});
  REQUIRE(eventually([&] { return cluster3::count(c.nodes[1]->log(), "cluster peer connected") >= 2; }));

  std::set<std::string> acked, segments_used;
  auto push_some = [&](const std::string& tag, int n) {
    auto conn = c.connect(1);
    int done = 0;
    for (int k = 0; done < n && k < 20 * n; ++k) {
      std::string p = tag;
      p.append("-").append(std::to_string(k));
      const auto r = conn.push_tracked(as_bytes(p), client::durability::replicated);
      if (!r.acked) continue;
      acked.insert(p);
      segments_used.insert(r.segment + "#" + std::to_string(r.index));
      ++done;
    }
    return done;
  };
  REQUIRE(push_some("first-life", 300) == 300);
  const auto first_life_ids = segments_used.size();

  // The machine dies and is replaced: same config, empty data_dir.
  ::kill(c.nodes[1]->pid(), SIGKILL);
  c.nodes[1]->wait_exit();
  std::filesystem::remove_all(c.dir(1));
  c.start(1);  // a reachable sink this time
  // Its Replicated pushes are served again within seconds.
  REQUIRE(eventually([&] { return push_some("second-life", 1) == 1; }, std::chrono::seconds(15)));
  REQUIRE(push_some("second-life-more", 300) == 300);
  // No coordinate (and so no record id) of the first life came again.
  CHECK(segments_used.size() == first_life_ids + 301);

  INFO(c.nodes[0]->log() + "\n---\n" + c.nodes[1]->log() + "\n---\n" + c.nodes[2]->log());
  CHECK(cluster3::count(c.nodes[1]->log(), "a new life of this node begins") == 1);
  CHECK(cluster3::count(c.nodes[0]->log() + c.nodes[2]->log(), "a copy of an earlier life of a node is retired") >= 1);
  // Every record acked in either life reaches the sink.
  const bool all = eventually([&] { return sink_holds_all(c.sink(), acked); }, std::chrono::seconds(60));
  INFO("missing: " << missing(c.sink(), acked));
  CHECK(all);
  // The retired copies are delivered and removed.
  CHECK(eventually([&] {
    return cluster3::count(c.nodes[0]->log() + c.nodes[2]->log(), "a retired copy of an earlier life is delivered") >= 1;
  }));
  for (auto& n : c.nodes) CHECK(n->stop() == 0);
}

TEST_CASE("cluster: a standalone WAB with undelivered records does not join a cluster", "[live][cluster]") {
  cluster3 c;
  // Node 1 first runs alone, and cannot deliver what it takes.
  std::filesystem::create_directories(c.dir(0));
  {
    daemon_process alone(c.dir(0), {"--set", "sink.type=http", "--set", "sink.http.url=http://127.0.0.1:1/"});
    REQUIRE(alone.wait_ready());
    auto conn = client::connection::connect_unix(alone.socket_path());
    REQUIRE(conn.push(as_bytes("written alone"), client::durability::durable).acked);
    CHECK(alone.stop() == 0);
  }
  c.launch(0);
  CHECK(c.nodes[0]->wait_exit() == 2);
  INFO(c.nodes[0]->log());
  CHECK(c.nodes[0]->log().find("holds 1 undelivered records of no node (written outside a cluster)") !=
        std::string::npos);
  // Delivered first (alone, with its sink), it joins.
  {
    daemon_process alone(c.dir(0), {"--set", "sink.type=sqlite", "--set", "sink.sqlite.path=" + c.sink()});
    REQUIRE(alone.wait_ready());
    REQUIRE(eventually([&] { return sink_holds_all(c.sink(), {"written alone"}); }));
    CHECK(alone.stop() == 0);
  }
  c.start(0);
  CHECK(c.nodes[0]->stop() == 0);
}

TEST_CASE("cluster: a node that crashes right after each start does not end its failover", "[live][cluster]") {
  cluster3 c;
  c.start(0);
  c.start(2);
  const std::vector<std::string> stuck{"--set", "sink.type=http", "--set", "sink.http.url=http://127.0.0.1:1/"};
  c.start(1, stuck);
  REQUIRE(eventually([&] { return cluster3::count(c.nodes[1]->log(), "cluster peer connected") >= 2; }));
  std::set<std::string> acked;
  {
    auto conn = c.connect(1);
    for (int k = 0; k < 100; ++k) {
      std::string p = "looped-";
      p += std::to_string(k);
      if (conn.push(as_bytes(p), client::durability::replicated).acked) acked.insert(p);
    }
  }
  REQUIRE(acked.size() == 100);
  ::kill(c.nodes[1]->pid(), SIGKILL);
  c.nodes[1]->wait_exit();
  const std::string taken = "failover: this node delivers a failed node's replica origin=2";
  const std::string ended = "failover ends: the origin delivers its own records again origin=2";
  const auto survivors = [&] { return c.nodes[0]->log() + c.nodes[2]->log(); };
  REQUIRE(eventually([&] { return cluster3::count(survivors(), taken) >= 1; }));
  // Three starts, each killed as soon as both survivors have taken it back.
  const std::string rejoined = "cluster peer connected peer=" + c.listen(1);
  for (int start = 0; start < 3; ++start) {
    const auto before = cluster3::count(survivors(), rejoined);
    c.launch(1, stuck);
    REQUIRE(eventually([&] { return cluster3::count(survivors(), rejoined) >= before + 2; }, std::chrono::seconds(60)));
    ::kill(c.nodes[1]->pid(), SIGKILL);
    c.nodes[1]->wait_exit();
  }
  INFO(survivors());
  CHECK(cluster3::count(survivors(), ended) == 0);
  CHECK(eventually([&] { return sink_holds_all(c.sink(), acked); }));
  // A start that lasts ends it.
  c.start(1);
  CHECK(eventually([&] { return cluster3::count(survivors(), ended) >= 1; }));
  for (auto& n : c.nodes) CHECK(n->stop() == 0);
}

TEST_CASE("cluster: a restarted node is called again before it would fail over a live peer", "[live][cluster]") {
  cluster3 c;
  c.start_all();
  // The node whose cluster.listen sorts last is called by both others.
  int last = 0;
  for (int i = 1; i < 3; ++i)
    if (c.listen(i) > c.listen(last)) last = i;
  const int origin = (last + 1) % 3;
  {
    auto conn = c.connect(origin);
    for (int k = 0; k < 50; ++k) {
      const std::string payload = std::to_string(k);
      REQUIRE(conn.push(as_bytes(payload), client::durability::replicated).acked);
    }
  }
  REQUIRE(c.nodes[last]->stop() == 0);
  // Long enough for the callers' reconnect backoff to reach its longest.
  std::this_thread::sleep_for(std::chrono::seconds(7));
  c.start(last);
  std::this_thread::sleep_for(std::chrono::seconds(3));  // failover_after_ms is 1 s here
  INFO(c.nodes[last]->log());
  std::string failover_of_origin = "a failed node's replica origin=";
  failover_of_origin += std::to_string(origin + 1);
  CHECK(cluster3::count(c.nodes[last]->log(), failover_of_origin) == 0);
  CHECK(cluster3::count(c.nodes[last]->log(), "cluster peer connected") >= 2);
  for (auto& n : c.nodes) CHECK(n->stop() == 0);
}

TEST_CASE("cluster: a node whose cluster.peers names a live peer wrongly does not fail it over", "[live][cluster]") {
  cluster3 c;
  c.start_all();
  // Of nodes 1 and 2, `b` sorts first and so calls `a`.
  const int a = c.listen(0) > c.listen(1) ? 0 : 1, b = 1 - a;
  {
    auto conn = c.connect(b);
    for (int k = 0; k < 50; ++k) {
      const std::string payload = std::to_string(k);
      REQUIRE(conn.push(as_bytes(payload), client::durability::replicated).acked);
    }
  }
  // `a` restarts listing `b` at a wrong address (one it never calls: it
  // sorts first): `b`'s hellos are not taken.
  REQUIRE(c.nodes[a]->stop() == 0);
  std::string peers = "cluster.peers=[127.0.0.0:" + std::to_string(c.ports[b]) + "," + c.listen(2) + "]";
  c.start(a, {"--set", peers});
  const std::string a_refuses = "a node not in cluster.peers said hello; not taken";
  const std::string b_told = "a cluster peer did not take this node as a member";
  INFO(c.nodes[a]->log() + "\n---\n" + c.nodes[b]->log());
  REQUIRE(eventually([&] { return cluster3::count(c.nodes[a]->log(), a_refuses) >= 1; }));
  CHECK(eventually([&] { return cluster3::count(c.nodes[b]->log(), b_told) >= 1; }));
  std::this_thread::sleep_for(std::chrono::seconds(3));  // failover_after_ms is 1 s here
  std::string failover_of_b = "a failed node's replica origin=";
  failover_of_b += std::to_string(b + 1);
  CHECK(cluster3::count(c.nodes[a]->log(), failover_of_b) == 0);
  for (auto& n : c.nodes) CHECK(n->stop() == 0);
}
