// The real daemon under hostile clients: slowloris, idle connections and a
// flood past listen.max_connections, peers that never read their replies,
// many half-sent 16 MiB frames, descriptor exhaustion, garbage, oversized
// declarations, abuse of the admin server. Throughout, an honest producer
// is served within a stated bound (`honest_bound`), the daemon's memory
// stays bounded (measured), and every record it acked is kept.
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

#include <catch2/catch.hpp>

#include "wire/frame.hpp"
#include "support/daemon_process.hpp"
#include "support/http_get.hpp"
#include "support/raw_peer.hpp"
#include "support/sink_contents.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "support/wab_contents.hpp"
#include "weir/client.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;
namespace w = weir::wire;

namespace {

/// The latency an honest producer is promised while attackers run: its
/// HealthCheck and its Durable push are each answered within this.
constexpr auto honest_bound = 2s;
constexpr std::uint64_t MiB = 1024 * 1024;

std::vector<std::uint8_t> health_frame() { return w::encode_frame(w::message_type::health_check, w::durability::durable, {}); }

/// An honest producer: connects, checks health and pushes one Durable record,
/// each within honest_bound. Returns the payload it got acked ("" if not).
std::string honest_round(const std::string& socket, int n) {
  const auto started = std::chrono::steady_clock::now();
  auto c = client::connection::connect_unix(socket);
  c.set_timeout(std::chrono::duration_cast<std::chrono::milliseconds>(honest_bound));
  c.health_check();
  const std::string payload = "honest " + std::to_string(n);
  const bool acked = c.push(as_bytes(payload), client::durability::durable).acked;
  CHECK(std::chrono::steady_clock::now() - started < 2 * honest_bound);
  return acked ? payload : "";
}

/// Every payload in the sink or still in the WAB.
std::set<std::string> kept_payloads(const std::filesystem::path& var) {
  std::set<std::string> out;
  for (const auto& row : sqlite_rows(var / "sink.db")) out.insert(row.payload);
  for (const auto& shard : all_shard_records(var))
    for (const auto& r : shard) out.insert(r.payload);
  return out;
}

void check_all_kept(const std::filesystem::path& var, const std::vector<std::string>& acked) {
  const auto kept = kept_payloads(var);
  std::size_t checked = 0;
  for (const auto& p : acked) {
    CHECK(kept.count(p) == 1);
    ++checked;
  }
  CHECK(checked == acked.size());
}

}  // namespace

TEST_CASE("a slowloris is closed within read_timeout_ms of its frame's first byte", "[live][hostile]") {
  // Both ways of reading the socket: Asio's reactor, and the epoll set many
  // producers get (runtime.read_batching).
  for (std::string reads : {"off", "always"}) {
    INFO("runtime.read_batching " << reads);
    temp_dir dir;
    daemon_process d(dir.path(), {"--set", "listen.read_timeout_ms=1000", "--set", "runtime.read_batching=" + reads});
    REQUIRE(d.wait_ready());
    raw_peer loris(d.socket_path());
    REQUIRE(loris.connected());
    // A valid push of 1000 bytes, sent one byte every 100 ms: each read comes
    // well within the timeout, the frame never does.
    const auto frame = w::encode_frame(w::message_type::push, w::durability::durable, byte_buffer(1000, 's'));
    const auto started = std::chrono::steady_clock::now();
    bool closed = false;
    for (std::size_t i = 0; i < 40 && !closed; ++i) {
      if (loris.send_some(&frame[i], 1) < 0) break;
      closed = loris.wait_closed(100ms);
    }
    CHECK(closed);
    CHECK(std::chrono::steady_clock::now() - started < 2500ms);
    CHECK(d.log().find("connection closed: a frame did not arrive whole within listen.read_timeout_ms") != std::string::npos);
    CHECK(d.stop() == 0);
  }
}

TEST_CASE("idle and trickling connections past max_connections do not lock producers out", "[live][hostile]") {
  temp_dir dir;
  const auto admin = free_tcp_port();
  daemon_process d(dir.path(), {"--set", "listen.max_connections=16", "--set",
                                "admin.listen=127.0.0.1:" + std::to_string(admin)});
  REQUIRE(d.wait_ready());
  const auto frame = health_frame();
  std::vector<raw_peer> attackers;
  std::vector<std::string> acked;
  for (int round = 0; round < 10; ++round) {
    // A flood: more attackers than slots, half idle, half trickling a frame.
    for (int i = 0; i < 24; ++i) {
      attackers.emplace_back(d.socket_path());
      if (i % 2 == 1) attackers.back().send_some(frame.data(), 3);
    }
    const auto payload = honest_round(d.socket_path(), round);
    CHECK_FALSE(payload.empty());
    if (!payload.empty()) acked.push_back(payload);
    if (attackers.size() > 200) attackers.erase(attackers.begin(), attackers.begin() + 100);
  }
  CHECK(acked.size() == 10);
  const auto metrics = http_request(admin, "/metrics").body;
  CHECK(metrics.find("weir_connections_evicted_total ") != std::string::npos);
  CHECK(metrics.find("weir_connections_evicted_total 0") == std::string::npos);
  CHECK(metrics.find("weir_connections_rejected_total{reason=\"over_limit\"}") != std::string::npos);
  // Told in the log too, a line for a burst: 240 attackers made fewer lines.
  const auto log = d.log();
  const auto lines = [&](const std::string& what) {
    std::size_t n = 0;
    for (auto at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(lines("connection closed for a newcomer at listen.max_connections") >= 1);
  CHECK(lines("connection closed for a newcomer at listen.max_connections") < 10);
  attackers.clear();
  CHECK(d.stop() == 0);
  check_all_kept(dir / "var", acked);
}

TEST_CASE("a peer that pipelines and never reads its replies cannot grow the daemon", "[live][hostile]") {
  for (std::string reads : {"off", "always"}) {
    INFO("runtime.read_batching " << reads);
    temp_dir dir;
    daemon_process d(dir.path(), {"--set", "runtime.read_batching=" + reads});
    REQUIRE(d.wait_ready());
    REQUIRE(!honest_round(d.socket_path(), 0).empty());
    const auto rss_before = resident_bytes(d.pid());
    std::vector<std::uint8_t> stream;
    for (int i = 0; i < 64 * 1024; ++i) {
      const auto f = health_frame();
      stream.insert(stream.end(), f.begin(), f.end());
    }
    auto greedy = std::make_unique<raw_peer>(d.socket_path());
    std::size_t taken = 0;
    const auto until = std::chrono::steady_clock::now() + 3s;
    while (std::chrono::steady_clock::now() < until) {
      const auto at = greedy->send_until_stalled(stream, 0, 300ms);
      taken += at;
      if (at < stream.size()) break;  // the daemon stopped taking bytes: backpressure
    }
    const auto rss_after = resident_bytes(d.pid());
    INFO("bytes the daemon took: " << taken << ", RSS " << rss_before << " -> " << rss_after);
    // Its reply limit (256 KiB), its read buffer and the kernel's socket buffers: a few MiB.
    CHECK(taken < 16 * MiB);
    CHECK(rss_after < rss_before + 32 * MiB);
    // Paused on a socket full of unread bytes, the daemon waits: a poller
    // that kept reporting the socket would spin a CPU here.
    const auto cpu_before = cpu_time(d.pid());
    std::this_thread::sleep_for(1s);
    const auto cpu_spent = cpu_time(d.pid()) - cpu_before;
    INFO("CPU time over 1 s while paused: " << cpu_spent.count() << " ms");
    CHECK(cpu_spent < 500ms);
    CHECK_FALSE(honest_round(d.socket_path(), 1).empty());
    greedy.reset();  // its owed replies would hold a graceful stop up to shutdown_timeout_ms
    CHECK(d.stop() == 0);
  }
}

TEST_CASE("half-sent 16 MiB frames share a bounded memory that is given back", "[live][hostile]") {
  temp_dir dir;
  daemon_process d(dir.path(), {"--set", "limits.frame_memory_bytes=64MiB", "--set", "listen.read_timeout_ms=2000"});
  REQUIRE(d.wait_ready());
  REQUIRE(!honest_round(d.socket_path(), 0).empty());
  const auto rss_before = resident_bytes(d.pid());
  // One frame of the largest payload, sent by every attacker but for its last bytes.
  const auto big = w::encode_frame(w::message_type::push, w::durability::durable,
                                   std::vector<std::uint8_t>(16 * MiB - 1, 'm'));
  const std::vector<std::uint8_t> all_but_tail(big.begin(), big.end() - 8);
  std::vector<raw_peer> attackers;
  std::vector<std::thread> senders;
  // Every frame's deadline runs from its first byte, also for the frames
  // that wait for memory the others hold: all are closed about 2 s after
  // they began, not in waves of four (slack for a loaded machine).
  const auto all_closed_by = std::chrono::steady_clock::now() + 6s;
  for (int i = 0; i < 24; ++i) attackers.emplace_back(d.socket_path());
  for (auto& a : attackers) senders.emplace_back([&a, &all_but_tail] { a.send_until_stalled(all_but_tail, 0, 500ms); });
  for (auto& t : senders) t.join();
  const auto rss_held = resident_bytes(d.pid());
  INFO("RSS " << rss_before << " before, " << rss_held << " while 24 frames of 16 MiB are half-sent");
  CHECK(rss_held < rss_before + 64 * MiB + 48 * MiB);
  // An honest producer of small records is not held up by them.
  CHECK_FALSE(honest_round(d.socket_path(), 1).empty());
  // They time out, and the memory goes back to the system.
  for (auto& a : attackers) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(all_closed_by - std::chrono::steady_clock::now());
    CHECK(a.wait_closed(std::max(left, std::chrono::milliseconds(0))));
  }
  std::uint64_t rss_after = 0;
  eventually([&] { return (rss_after = resident_bytes(d.pid())) < rss_before + 32 * MiB; }, 15s);
  INFO("RSS after the attackers were closed: " << rss_after);
  CHECK(rss_after < rss_before + 32 * MiB);
  // The log says when connections began to wait for frame memory and when none did any more.
  CHECK(eventually([&] { return d.log().find("frame memory (limits.frame_memory_bytes) is spent") != std::string::npos; }));
  CHECK(eventually([&] { return d.log().find("frame memory is free again") != std::string::npos; }, 15s));
  CHECK(d.stop() == 0);
}

namespace {

/// Eight peers announce the largest payload and send its first 64 bytes:
/// the first four take all of a 64 MiB frame memory, the rest wait in line.
/// Then every 100 ms each sends `trickle` bytes more (none for 0), never
/// quiet for the stall time (300 ms) when it does, far too slow for 16 MiB
/// to arrive within the read timeout (8 s; judged on their pace after a
/// sixth of it). An honest producer's 1 MiB record must still be acked
/// within 5 s, before that timeout would have taken the attackers away.
void large_push_gets_frame_memory_despite(std::size_t trickle) {
  temp_dir dir;
  const auto admin = free_tcp_port();
  daemon_process d(dir.path(), {"--set", "limits.frame_memory_bytes=64MiB", "--set", "limits.frame_memory_stall_ms=300",
                                "--set", "listen.read_timeout_ms=8000", "--set", "admin.listen=127.0.0.1:" + std::to_string(admin)});
  REQUIRE(d.wait_ready());
  const auto big = w::encode_frame(w::message_type::push, w::durability::durable,
                                   std::vector<std::uint8_t>(16 * MiB - 1, 'm'));
  std::vector<raw_peer> attackers;
  std::vector<std::size_t> sent;
  for (int i = 0; i < 8; ++i) {
    attackers.emplace_back(d.socket_path());
    sent.push_back(static_cast<std::size_t>(std::max(0L, attackers.back().send_some(big.data(), 64))));
  }
  std::atomic<bool> stop{false};
  std::thread trickler([&] {
    while (trickle > 0 && !stop) {
      std::this_thread::sleep_for(100ms);
      for (std::size_t i = 0; i < attackers.size(); ++i) {
        const long n = attackers[i].send_some(big.data() + sent[i], trickle);
        if (n > 0) sent[i] += static_cast<std::size_t>(n);
      }
    }
  });
  const std::string payload(1 * MiB, 'h');
  std::string failure;  // the trickler must stop whatever happens here
  bool acked = false;
  const auto started = std::chrono::steady_clock::now();
  try {
    if (!eventually([&] { return scrape_series(http_request(admin, "/metrics").body, "weir_frame_memory_waits_total") >= 4; }))
      throw std::runtime_error("the attackers never waited for frame memory");
    auto c = client::connection::connect_unix(d.socket_path());
    c.set_timeout(5s);
    acked = c.push(as_bytes(payload), client::durability::durable).acked;
  } catch (const std::exception& e) {
    failure = e.what();
  }
  const auto took = std::chrono::steady_clock::now() - started;
  stop = true;
  trickler.join();
  CHECK(failure == "");
  CHECK(acked);
  CHECK(took < 5s);  // the client's timeout is per wait: this is the bound
  CHECK(scrape_series(http_request(admin, "/metrics").body, "weir_frame_memory_reclaimed_total") >= 1);
  CHECK(d.log().find("frame memory taken back for a connection that waits") != std::string::npos);
  CHECK(d.log().find(trickle > 0 ? "why=too_slow" : "why=stalled") != std::string::npos);
  std::size_t closed = 0;
  for (auto& a : attackers) closed += a.wait_closed(0ms);
  CHECK(closed >= 1);
  CHECK(d.stop() == 0);
  check_all_kept(dir / "var", {payload});
}

}  // namespace

TEST_CASE("headers announcing 16 MiB and nothing after them cannot keep frame memory from a large push",
          "[live][hostile]") {
  large_push_gets_frame_memory_despite(0);
}

TEST_CASE("peers trickling into 16 MiB frames cannot keep frame memory from a large push", "[live][hostile]") {
  large_push_gets_frame_memory_despite(16);
}

TEST_CASE("out of file descriptors the acceptor backs off instead of spinning", "[live][hostile]") {
  temp_dir dir;
  const auto admin = free_tcp_port();
  // No spare segments: preparing them (writing zeros) after startup would be
  // counted here as CPU the acceptor used.
  daemon_process d(dir.path(), {"--set", "admin.listen=127.0.0.1:" + std::to_string(admin), "--set", "wab.spare_segments=0"});
  REQUIRE(d.wait_ready());
  REQUIRE(!honest_round(d.socket_path(), 0).empty());
  // Leave the daemon almost no descriptor to spare.
  const auto in_use = open_files(d.pid());
  REQUIRE(set_open_file_limit(d.pid(), in_use + 2));
  std::vector<raw_peer> waiting;
  for (int i = 0; i < 20; ++i) waiting.emplace_back(d.socket_path());
  const auto cpu_before = cpu_time(d.pid());
  std::this_thread::sleep_for(2s);
  const auto cpu_used = cpu_time(d.pid()) - cpu_before;
  INFO("CPU the daemon used in 2 s with accept failing: " << cpu_used.count() << " ms");
  CHECK(cpu_used < 500ms);
  const auto log = d.log();
  std::size_t lines = 0;
  for (auto at = log.find("accept failed"); at != std::string::npos; at = log.find("accept failed", at + 1)) ++lines;
  CHECK(lines >= 1);
  CHECK(lines <= 3);
  // Descriptors come back: the queued producers are served.
  REQUIRE(set_open_file_limit(d.pid(), 4096));
  waiting.clear();
  CHECK_FALSE(honest_round(d.socket_path(), 1).empty());
  const auto metrics = http_request(admin, "/metrics").body;
  CHECK(metrics.find("weir_accept_errors_total 0") == std::string::npos);
  CHECK(d.stop() == 0);
}

TEST_CASE("max_connections beyond the hard open-file limit is refused at start", "[live][hostile]") {
  temp_dir dir;
  const auto r = run_binary("/usr/bin/prlimit",
                            {"--nofile=256:256", binary("weir-server").string(), "--set", "listen.max_connections=5000"},
                            dir.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("listen.max_connections = 5000") != std::string::npos);
  CHECK(r.err.find("RLIMIT_NOFILE") != std::string::npos);
}

TEST_CASE("garbage and oversized declarations get their answer and nothing else changes", "[live][hostile]") {
  temp_dir dir;
  daemon_process d(dir.path());
  REQUIRE(d.wait_ready());
  std::mt19937 rng(7);
  std::vector<std::string> acked;
  for (int i = 0; i < 200; ++i) {
    raw_peer p(d.socket_path());
    std::vector<std::uint8_t> junk(1 + rng() % 4096);
    for (auto& b : junk) b = static_cast<std::uint8_t>(rng());
    p.send_some(junk.data(), junk.size());
    if (i % 50 == 0) {
      const auto payload = honest_round(d.socket_path(), i);
      CHECK_FALSE(payload.empty());
      acked.push_back(payload);
    }
  }
  // A header declaring a payload far over the cap, and a batch declaring more
  // records than allowed: refused from the header, before any allocation.
  auto huge = w::encode_frame(w::message_type::push, w::durability::durable, byte_buffer{1});
  auto c = client::connection::connect_unix(d.socket_path());
  c.set_timeout(5s);
  std::vector<std::uint8_t> header(huge.begin(), huge.begin() + w::header_size);
  store_le32(header.data() + 8, 0xfffffff0u);  // payload length
  store_le32(header.data() + 12, crc32_of(byte_span(header.data(), 12)));
  c.send_raw(header);
  auto reply = c.read_reply();
  REQUIRE(reply.type == static_cast<std::uint8_t>(w::message_type::nack));
  CHECK(reply.payload.at(0) == static_cast<std::uint8_t>(w::nack_reason::payload_too_large));
  CHECK(d.running());
  CHECK(d.stop() == 0);
  check_all_kept(dir / "var", acked);
}

TEST_CASE("the admin server stays reachable through idle floods and huge headers and slow readers", "[live][hostile]") {
  temp_dir dir;
  const auto admin = free_tcp_port();
  daemon_process d(dir.path(), {"--set", "admin.listen=127.0.0.1:" + std::to_string(admin)});
  REQUIRE(d.wait_ready());
  std::vector<int> idle;
  for (int i = 0; i < 64; ++i) idle.push_back(tcp_connect(admin));
  const std::string huge_header = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(1 << 20, 'h') + "\r\n\r\n";
  const int big = tcp_connect(admin);
  tcp_send(big, huge_header);
  // Slow readers: ask for the dashboard and never read it.
  for (int i = 0; i < 8; ++i) {
    const int s = tcp_connect(admin);
    tcp_send(s, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    idle.push_back(s);
  }
  const auto started = std::chrono::steady_clock::now();
  CHECK(http_request(admin, "/healthz").status == 200);
  CHECK(std::chrono::steady_clock::now() - started < honest_bound);
  CHECK(d.running());
  for (int s : idle) tcp_close(s);
  tcp_close(big);
  CHECK(d.stop() == 0);
}

namespace {

/// Everything a peer sends until it closes.
std::string read_until_closed(int fd) {
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) got.append(buf, static_cast<std::size_t>(n));
  return got;
}

}  // namespace

TEST_CASE("the admin server answers HEAD with headers and no body", "[live][hostile]") {
  temp_dir dir;
  const auto admin = free_tcp_port();
  daemon_process d(dir.path(), {"--set", "admin.listen=127.0.0.1:" + std::to_string(admin)});
  REQUIRE(d.wait_ready());
  // A HEAD then a GET on one connection: the GET's answer must start right
  // after the HEAD's headers.
  const int fd = tcp_connect(admin);
  tcp_send(fd, "HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const std::string both = read_until_closed(fd);
  tcp_close(fd);
  INFO(both);
  const auto head_end = both.find("\r\n\r\n");
  REQUIRE(head_end != std::string::npos);
  CHECK(both.find("Content-Length: 3\r\n") < head_end);
  CHECK(both.compare(head_end + 4, 15, "HTTP/1.1 200 OK") == 0);
  CHECK(both.substr(both.size() - 3) == "ok\n");
  CHECK(d.stop() == 0);
}

TEST_CASE("the admin server forgets closed connections", "[live][hostile]") {
  temp_dir dir;
  const auto admin = free_tcp_port();
  daemon_process d(dir.path(), {"--set", "admin.listen=127.0.0.1:" + std::to_string(admin)});
  REQUIRE(d.wait_ready());
  // Probes that never hold 32 connections at once, many times over.
  const auto rss_before = resident_bytes(d.pid());
  for (int i = 0; i < 20000; ++i) {
    const int probe = tcp_connect(admin);
    tcp_send(probe, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    read_until_closed(probe);
    tcp_close(probe);
  }
  const auto rss_after = resident_bytes(d.pid());
  INFO("RSS " << rss_before << " before 20000 admin connections, " << rss_after << " after");
  CHECK(rss_after < rss_before + 4 * MiB);
  CHECK(d.stop() == 0);
}
