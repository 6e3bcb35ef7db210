// runtime.buffered_spin_us: the io thread polls its sockets for a while after
// a Buffered ack instead of sleeping, and sleeps as before otherwise.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>

#include "runtime/io_thread_loop.hpp"
#include "support/daemon_process.hpp"
#include "support/http_get.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "weir/client.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// The loop on its own thread; whatever a failed check leaves behind, the
/// loop is stopped and joined (a joinable thread destroyed would abort the
/// whole test binary instead of failing one test).
struct loop_thread {
  boost::asio::io_context& io;
  std::thread thread;
  loop_thread(boost::asio::io_context& io_, const io_spin_policy& policy)
      : io(io_), thread([this, policy] { run_io_thread(io, policy); }) {}
  ~loop_thread() {
    io.stop();
    if (thread.joinable()) thread.join();
  }
  /// Whether the loop returned on its own within `limit`.
  bool returns_within(std::chrono::milliseconds limit) {
    const bool ended = eventually([&] { return io.stopped(); }, limit);
    if (ended) thread.join();
    return ended;
  }
};

/// Notes a Buffered ack every few microseconds until destroyed.
struct acking {
  buffered_activity& buffered;
  std::atomic<bool> stop{false};
  std::thread thread;
  explicit acking(buffered_activity& b) : buffered(b), thread([this] {
    while (!stop.load()) {
      buffered.note_ack();
      std::this_thread::sleep_for(10us);
    }
  }) {}
  ~acking() {
    stop = true;
    thread.join();
  }
};

/// A daemon with its admin server on a free port, each of `settings` given
/// as a --set.
struct admin_daemon {
  temp_dir dir;
  std::uint16_t port = free_tcp_port();
  daemon_process daemon;
  explicit admin_daemon(const std::vector<std::string>& settings) : daemon(dir.path(), args(port, settings)) {}
  double series(const std::string& name) { return scrape_series(http_request(port, "/metrics").body, name); }

 private:
  static std::vector<std::string> args(std::uint16_t port, const std::vector<std::string>& settings) {
    std::vector<std::string> out{"--set", "admin.listen=127.0.0.1:" + std::to_string(port)};
    for (const auto& s : settings) out.insert(out.end(), {"--set", s});
    return out;
  }
};

}  // namespace

TEST_CASE("io thread loop: without a recent Buffered ack it sleeps between handlers and never polls",
          "[buffered_spin]") {
  boost::asio::io_context io;
  buffered_activity buffered;  // no ack yet
  io_spin_stats stats;
  auto work = boost::asio::make_work_guard(io);
  std::atomic<int> ran{0};
  loop_thread loop(io, {1000us, &buffered, &stats});
  for (int i = 0; i < 100; ++i) boost::asio::post(io, [&] { ++ran; });
  REQUIRE(eventually([&] { return ran.load() == 100; }));
  work.reset();  // out of work: the loop returns, as run() does
  CHECK(loop.returns_within(5s));
  CHECK(stats.spun_ns.load() == 0);
  CHECK(stats.caught.load() + stats.expired.load() == 0);
}

TEST_CASE("io thread loop: after Buffered acks it polls and runs every handler", "[buffered_spin]") {
  boost::asio::io_context io;
  buffered_activity buffered;
  io_spin_stats stats;
  auto work = boost::asio::make_work_guard(io);
  std::atomic<int> ran{0};
  loop_thread loop(io, {1000us, &buffered, &stats});
  // A Buffered producer's pattern: an ack, then the next frame soon after.
  for (int i = 0; i < 500; ++i) {
    buffered.note_ack();
    const int before = ran.load();
    boost::asio::post(io, [&] { ++ran; });
    // Not eventually(): its pause between looks would be most of the test.
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (ran.load() == before && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    REQUIRE(ran.load() > before);
  }
  CHECK(stats.caught.load() >= 1);  // a handler landed while it polled: no sleep, no wake-up
  CHECK(stats.spun_ns.load() > 0);
  CHECK(stats.thread.load() != 0);
}

TEST_CASE("io thread loop: a loop that is polling returns when stopped or out of work", "[buffered_spin]") {
  boost::asio::io_context io;
  buffered_activity buffered;
  io_spin_stats stats;
  auto work = boost::asio::make_work_guard(io);
  acking acks(buffered);  // fresh acks all along: the loop never stops polling on its own
  loop_thread loop(io, {1000us, &buffered, &stats});
  // A handler run while polling says it polls (a window is counted only
  // when it ends, and with fresh acks only a handler ends it).
  REQUIRE(eventually([&] {
    boost::asio::post(io, [] {});
    return stats.caught.load() > 0;
  }));
  const bool by_stop = GENERATE(true, false);
  INFO((by_stop ? "io_context::stop()" : "the work guard reset"));
  if (by_stop) io.stop();
  else work.reset();
  CHECK(loop.returns_within(5s));
}

TEST_CASE("io thread loop: no polling while the reads are batched", "[buffered_spin]") {
  boost::asio::io_context io;
  buffered_activity buffered;
  io_spin_stats stats;
  read_batching_stats reads;
  reads.batching = true;  // more than 8 connections sending
  auto work = boost::asio::make_work_guard(io);
  acking acks(buffered);
  std::atomic<int> ran{0};
  {
    loop_thread loop(io, {1000us, &buffered, &stats, &reads});
    for (int i = 0; i < 100; ++i) boost::asio::post(io, [&] { ++ran; });
    REQUIRE(eventually([&] { return ran.load() == 100; }));
    CHECK(stats.spun_ns.load() == 0);
    CHECK(stats.caught.load() + stats.expired.load() == 0);
    // Back to few connections: it polls again.
    reads.batching = false;
    CHECK(eventually([&] {
      boost::asio::post(io, [&] { ++ran; });
      return stats.caught.load() > 0;
    }));
  }
}

TEST_CASE("io thread loop: spin 0 or no activity source is io_context::run()", "[buffered_spin]") {
  boost::asio::io_context io;
  buffered_activity buffered;
  buffered.note_ack();
  io_spin_stats stats;
  const bool no_source = GENERATE(false, true);
  const io_spin_policy policy{no_source ? 50us : 0us, no_source ? nullptr : &buffered, &stats};
  std::atomic<int> ran{0};
  for (int i = 0; i < 10; ++i) boost::asio::post(io, [&] { ++ran; });
  run_io_thread(io, policy);  // no work guard: returns once the handlers ran
  CHECK(ran.load() == 10);
  CHECK(stats.spun_ns.load() == 0);
}

TEST_CASE("buffered spin: a lone Buffered producer's frames are caught by polling and Durable ones never poll",
          "[live][buffered_spin]") {
  // Durable only: nothing is ever polled for.
  {
    admin_daemon d({});
    REQUIRE(d.daemon.wait_ready());
    CHECK(d.daemon.log().find("buffered_spin=50us") != std::string::npos);
    auto c = client::connection::connect_unix(d.daemon.socket_path());
    int acked = 0;
    for (int i = 0; i < 200; ++i) acked += c.push(as_bytes("durable " + std::to_string(i)), client::durability::durable).acked;
    CHECK(acked == 200);
    CHECK(d.series("weir_io_spin_seconds_total") == 0);
    CHECK(d.series("weir_io_spin_polls_total{outcome=\"caught\"}") == 0);
    CHECK(d.daemon.stop() == 0);
  }
  // Buffered, one push at a time: the io thread polls between them.
  {
    admin_daemon d({"runtime.buffered_spin_us=1000"});
    REQUIRE(d.daemon.wait_ready());
    auto c = client::connection::connect_unix(d.daemon.socket_path());
    int acked = 0;
    for (int i = 0; i < 2000; ++i)
      acked += c.push(as_bytes("buffered " + std::to_string(i)), client::durability::buffered).acked;
    CHECK(acked == 2000);
    CHECK(d.series("weir_records_ack_total{tier=\"buffered\"}") == 2000);
    CHECK(d.series("weir_io_spin_seconds_total") > 0);
    CHECK(d.series("weir_io_spin_polls_total{outcome=\"caught\"}") >= 1);
    const std::string status = http_request(d.port, "/api/v1/status").body;
    CHECK(status.find("\"buffered_spin\"") != std::string::npos);
    CHECK(d.daemon.stop() == 0);
  }
  // Off, or more than one io thread: no polling and no series.
  for (const auto& setting : {std::string("runtime.buffered_spin_us=0"), std::string("runtime.io_threads=2")}) {
    INFO(setting);
    admin_daemon d({setting});
    REQUIRE(d.daemon.wait_ready());
    CHECK(d.daemon.log().find("buffered_spin=off") != std::string::npos);
    auto c = client::connection::connect_unix(d.daemon.socket_path());
    CHECK(c.push(as_bytes(std::string("one")), client::durability::buffered).acked);
    CHECK(d.series("weir_io_spin_seconds_total") == -1);
    CHECK(d.daemon.stop() == 0);
  }
}
