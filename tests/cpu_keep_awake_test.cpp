// runtime.keep_awake_us: the spinners that keep the daemon's CPUs out of
// their idle state while producers are active — they spin after client
// bytes, sleep once the window has passed, rest under frequent bytes, stop
// promptly — and the daemon that runs them still acks, says so and exports
// what they spent.
#include <chrono>
#include <thread>

#include <catch2/catch.hpp>

#include "config/loader.hpp"
#include "runtime/cpu_keep_awake.hpp"
#include "runtime/usable_cores.hpp"
#include "support/daemon_process.hpp"
#include "support/http_get.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "weir/client.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

std::int64_t spun_ns(const cpu_keep_awake& k) { return k.stats().spun_ns.load(); }

}  // namespace

TEST_CASE("keep-awake: one spinner per allowed CPU asleep until client bytes", "[keep_awake]") {
  const auto cpus = allowed_cpus(64);
  REQUIRE(!cpus.empty());
  CHECK(allowed_cpus(1).size() == 1);
  cpu_keep_awake k(200ms, cpus);
  CHECK(k.stats().spinners == cpus.size());
  // Every spinner has run and gone to sleep without spinning.
  REQUIRE(eventually([&] { return k.asleep() == cpus.size(); }));
  CHECK(k.spinning() == 0);
  CHECK(spun_ns(k) == 0);
  CHECK(k.stats().spells.load() == 0);
}

TEST_CASE("keep-awake: client bytes keep every spinner spinning for the window and then it sleeps", "[keep_awake]") {
  const auto window = 200ms;
  const auto cpus = allowed_cpus(2);
  const auto n = static_cast<std::uint64_t>(cpus.size());
  cpu_keep_awake k(window, cpus);
  k.note_activity();
  // One spell per spinner, each a whole window from when that spinner saw
  // the bytes, however late it got its CPU (the time counts preempted
  // stretches too); then all asleep again.
  REQUIRE(eventually([&] { return k.stats().spells.load() == n && k.asleep() == n; }));
  CHECK(spun_ns(k) >= std::chrono::nanoseconds(window).count() * static_cast<std::int64_t>(n));
  const auto after = spun_ns(k);
  std::this_thread::sleep_for(300ms);  // asleep: nothing more is spun without bytes
  CHECK(spun_ns(k) == after);
  CHECK(k.spinning() == 0);
  CHECK(k.stats().spells.load() == n);
  CHECK(k.stats().rests.load() == 0);

  // And the next bytes wake them again.
  k.note_activity();
  REQUIRE(eventually([&] { return k.stats().spells.load() == 2 * n && k.asleep() == n; }));
  CHECK(spun_ns(k) >= after + std::chrono::nanoseconds(window).count() * static_cast<std::int64_t>(n));
}

TEST_CASE("keep-awake: spinners rest while bytes arrive more often than every 50 us", "[keep_awake]") {
  cpu_keep_awake k(100ms, allowed_cpus(2));
  const auto n = k.stats().spinners;
  // Bytes without pause, far above the busy rate, for as long as it takes
  // every spinner (SCHED_IDLE: last in line on a busy machine) to look, and
  // then through two rests more: a rest that saw bytes that frequent is
  // followed by another, without spinning in between.
  // This thread can be kept off the CPU (a busy machine): a rest that
  // then saw no bytes rightly ends in a spell, so each such stall allows
  // one more. Counted generously, as any pause longer than busy_period.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  int stalls = 0;
  auto last = std::chrono::steady_clock::now();
  while (k.stats().rests.load() < 3 * n && last < deadline)
    for (int i = 0; i < 1000; ++i) {
      k.note_activity();
      const auto now = std::chrono::steady_clock::now();
      stalls += now - last > cpu_keep_awake::busy_period;
      last = now;
    }
  CHECK(k.stats().rests.load() >= 3 * n);
  INFO("pauses of this thread longer than busy_period: " << stalls);
  CHECK(k.stats().spells.load() <= n + static_cast<unsigned>(stalls));  // one spell each, ended by the first rest
  // The bytes stopped: after a rest that saw none, each spinner spins for
  // the last of them, then sleeps until the next.
  REQUIRE(eventually([&] { return k.asleep() == n; }));
  k.note_activity();
  REQUIRE(eventually([&] { return k.spinning() >= 1; }));
}

TEST_CASE("keep-awake: stopping ends a spell at once", "[keep_awake]") {
  auto k = std::make_unique<cpu_keep_awake>(60s, allowed_cpus(2));
  k->note_activity();
  REQUIRE(eventually([&] { return k->spinning() >= 1; }));
  const auto stopping = std::chrono::steady_clock::now();
  k.reset();  // a window of a minute is not waited for
  INFO("stopping took " << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - stopping).count() << " ms");
  CHECK(std::chrono::steady_clock::now() - stopping < 30s);
}

TEST_CASE("keep-awake: a slow trickle of bytes is spun for and not rested from", "[keep_awake]") {
  // One read a millisecond, well under the busy rate: the spinners spin
  // through and never rest.
  cpu_keep_awake k(50ms, allowed_cpus(2));
  for (int i = 0; i < 300; ++i) {
    k.note_activity();
    std::this_thread::sleep_for(1ms);
  }
  CHECK(k.stats().rests.load() == 0);
  CHECK(spun_ns(k) > 0);
}

TEST_CASE("keep-awake: after a busy spell a slower trickle is spun for again", "[keep_awake]") {
  cpu_keep_awake k(50ms, allowed_cpus(2));
  const auto n = k.stats().spinners;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (k.stats().rests.load() < n && std::chrono::steady_clock::now() < deadline)
    for (int i = 0; i < 1000; ++i) k.note_activity();
  REQUIRE(k.stats().rests.load() >= n);
  // One read a millisecond: 50 in each 50 ms rest, under the busy rate of
  // the rest and of every spun millisecond alike. A rest or two may still
  // see the busy bytes; after that the spinners spin and rest no more.
  const auto trickle = [&](int ms) {
    for (int i = 0; i < ms; ++i) {
      k.note_activity();
      std::this_thread::sleep_for(1ms);
    }
  };
  trickle(500);
  const auto rests = k.stats().rests.load();
  const auto spun = spun_ns(k);
  trickle(500);
  CHECK(k.stats().rests.load() == rests);
  CHECK(spun_ns(k) - spun >= std::chrono::nanoseconds(200ms).count());
}

TEST_CASE("keep-awake: runtime.keep_awake_us is bounded", "[keep_awake][config]") {
  for (const char* bad : {"runtime.keep_awake_us=-1", "runtime.keep_awake_us=1000001", "runtime.keep_awake_us=soon"}) {
    INFO(bad);
    config_sources src;
    src.file_required = false;
    src.overrides = {bad};
    try {
      load_config(src);
      FAIL("accepted");
    } catch (const config_error& e) {
      CHECK(std::string(e.what()).find("runtime.keep_awake_us") != std::string::npos);
    }
  }
}

TEST_CASE("keep-awake: a daemon with spinners acks and says so when ready and exports their time", "[live][keep_awake]") {
  temp_dir dir;
  const std::uint16_t port = free_tcp_port();
  daemon_process d(dir.path(), {"--set", "admin.listen=127.0.0.1:" + std::to_string(port), "--set",
                                "runtime.keep_awake_us=2000"});
  REQUIRE(d.wait_ready());
  CHECK(d.log().find("keep_awake=\"2000us on ") != std::string::npos);
  auto c = client::connection::connect_unix(d.socket_path());
  for (int i = 0; i < 50; ++i) REQUIRE(c.push(as_bytes("awake " + std::to_string(i)), client::durability::durable).acked);
  double spun = 0;
  REQUIRE(eventually([&] {
    spun = scrape_series(http_request(port, "/metrics").body, "weir_keep_awake_spin_seconds_total");
    return spun > 0;
  }));
  CHECK(scrape_series(http_request(port, "/metrics").body, "weir_keep_awake_rests_total") >= 0);
  CHECK(d.stop() == 0);

  // Off by default: no spinners, no series.
  temp_dir quiet_dir;
  const std::uint16_t quiet_port = free_tcp_port();
  daemon_process quiet(quiet_dir.path(), {"--set", "admin.listen=127.0.0.1:" + std::to_string(quiet_port)});
  REQUIRE(quiet.wait_ready());
  CHECK(quiet.log().find("keep_awake=off") != std::string::npos);
  CHECK(scrape_series(http_request(quiet_port, "/metrics").body, "weir_keep_awake_spin_seconds_total") == -1);
  CHECK(quiet.stop() == 0);
}
