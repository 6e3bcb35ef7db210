// runtime.keep_awake_us: the spinners that keep the daemon's CPUs out of
// their idle state while producers are active — they spin after client
// bytes, sleep once the window has passed, rest under frequent bytes, stop
// promptly — and the daemon that runs them still acks, says so and exports
// what they spent.
#include <chrono>
#include <thread>

#include <catch2/catch.hpp>

#include "config/loader.hpp"
#include "daemon/cpu_keep_awake.hpp"
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
  std::this_thread::sleep_for(100ms);  // time in which a spinner that did not wait would spin
  CHECK(k.spinning() == 0);
  CHECK(spun_ns(k) == 0);
}

TEST_CASE("keep-awake: client bytes keep every spinner spinning for the window and then it sleeps", "[keep_awake]") {
  const auto window = 200ms;
  const auto cpus = allowed_cpus(2);
  cpu_keep_awake k(window, cpus);
  k.note_activity();
  // Each spinner, however late it gets its CPU, spins one whole window from
  // when it sees the bytes (its time counts preempted stretches too).
  const auto at_least = std::chrono::nanoseconds(window).count() * static_cast<std::int64_t>(cpus.size());
  const bool spun_enough = eventually([&] { return spun_ns(k) >= at_least; });
  INFO("spun " << spun_ns(k) << " ns; at least " << at_least << " expected");
  REQUIRE(spun_enough);
  REQUIRE(eventually([&] { return k.spinning() == 0; }));
  const auto after = spun_ns(k);
  std::this_thread::sleep_for(300ms);  // asleep: nothing more is spun without bytes
  CHECK(spun_ns(k) == after);
  CHECK(k.spinning() == 0);
  CHECK(k.stats().rests.load() == 0);

  // And the next bytes wake them again.
  k.note_activity();
  REQUIRE(eventually([&] { return spun_ns(k) >= after + at_least; }));
}

TEST_CASE("keep-awake: spinners rest while bytes arrive more often than every 50 us and stop at once", "[keep_awake]") {
  auto k = std::make_unique<cpu_keep_awake>(60s, allowed_cpus(2));
  // Far above busy_reads_per_period per busy_period, for as long as it takes
  // a spinner (SCHED_IDLE: last in line on a busy machine) to look.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (k->stats().rests.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    k->note_activity();
    std::this_thread::sleep_for(5us);
  }
  CHECK(k->stats().rests.load() >= 1);
  // A window of a minute is not waited for: stopping ends a spell at once.
  k->note_activity();
  const auto stopping = std::chrono::steady_clock::now();
  k.reset();
  INFO("stopping took " << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - stopping).count() << " ms");
  CHECK(std::chrono::steady_clock::now() - stopping < 30s);
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
