// runtime.cpu_placement: the daemon's threads gather on one CPU (one that
// takes the WAB disk's interrupts) while the daemon fits on one, spread over
// every usable CPU as soon as they queue for it, and do not flap.
#include <atomic>
#include <chrono>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "config/loader.hpp"
#include "runtime/client_activity.hpp"
#include "runtime/cpu_placement.hpp"
#include "runtime/disk_interrupts.hpp"
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

using policy = placement_policy;
using move = placement_policy::move;

const placement_sample quiet{1, 0.4, 0.2};
const placement_sample crowded{9, 0.5, 0.3};    // more connections sending than one CPU serves well
const placement_sample queued{2, 0.8, 1.6};     // threads waiting for the CPU
const placement_sample saturated{1, 0.95, 0.1};  // the CPU ran out

/// Feeds `s` once a tick from `t` until the policy moves; the tick it moved
/// on (or -1 after `ticks`).
int ticks_until_move(policy& p, placement_sample s, policy::clock::time_point& t, int ticks = 1000) {
  for (int i = 1; i <= ticks; ++i) {
    t += cpu_placement::tick;
    if (p.next(s, t) != move::stay) return i;
  }
  return -1;
}

/// The CPUs each thread of `pid` may run on, one entry per thread.
std::vector<std::vector<int>> thread_cpus(pid_t pid) {
  std::vector<std::vector<int>> out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("Cpus_allowed_list:", 0) == 0) out.push_back(parse_cpu_list(line.substr(line.find_first_not_of(" \t", 18))));
  }
  return out;
}

bool all_threads_on(pid_t pid, const std::vector<int>& cpus) {
  const auto lists = thread_cpus(pid);
  return !lists.empty() && std::all_of(lists.begin(), lists.end(), [&](const auto& l) { return l == cpus; });
}

}  // namespace

TEST_CASE("cpu placement: the gathering CPU is the lowest allowed one that takes the disk's interrupts",
          "[cpu_placement]") {
  CHECK(gather_cpu({0, 1, 2, 3}, {2, 3}) == 2);
  CHECK(gather_cpu({0, 1, 2, 3}, {}) == 0);        // unknown: the lowest allowed
  CHECK(gather_cpu({4, 5}, {0, 1}) == 4);          // none of them allowed
  CHECK(gather_cpu({0, 1, 2, 3}, {3, 0, 1}) == 0);  // every CPU has a queue (NVMe)
  CHECK(gather_cpu({}, {1}) == -1);
}

TEST_CASE("cpu placement: half a second of quiet gathers and a loud tick starts the count again", "[cpu_placement]") {
  policy p;
  auto t = policy::clock::now();
  CHECK_FALSE(p.gathered());
  for (int i = 1; i < policy::quiet_ticks_to_gather; ++i) {
    t += cpu_placement::tick;
    CHECK(p.next(quiet, t) == move::stay);
  }
  t += cpu_placement::tick;
  CHECK(p.next(saturated, t) == move::stay);  // loud: the count starts again
  for (int i = 1; i < policy::quiet_ticks_to_gather; ++i) {
    t += cpu_placement::tick;
    CHECK(p.next(quiet, t) == move::stay);
  }
  t += cpu_placement::tick;
  CHECK(p.next(crowded, t) == move::stay);  // so do many connections
  CHECK(ticks_until_move(p, quiet, t) == policy::quiet_ticks_to_gather);
  CHECK(p.gathered());
  // Gathered, quiet ticks keep it so.
  CHECK(ticks_until_move(p, quiet, t, 100) == -1);
  CHECK(p.gathered());
}

TEST_CASE("cpu placement: when gathered one tick of many connections or queued threads or a full CPU spreads", "[cpu_placement]") {
  for (const auto& loud : {crowded, queued, saturated}) {
    policy p;
    auto t = policy::clock::now();
    REQUIRE(ticks_until_move(p, quiet, t) == policy::quiet_ticks_to_gather);
    t += cpu_placement::tick;
    CHECK(p.next(loud, t) == move::spread);
    CHECK_FALSE(p.gathered());
  }
  // At every limit, not over it, stays.
  policy p;
  auto t = policy::clock::now();
  REQUIRE(ticks_until_move(p, quiet, t) == policy::quiet_ticks_to_gather);
  CHECK(ticks_until_move(p, {policy::most_sending_connections, policy::spread_above_cores, policy::spread_above_waiting},
                         t, 50) == -1);
}

TEST_CASE("cpu placement: a gathering undone soon doubles the wait before the next up to 64 s", "[cpu_placement]") {
  policy p;
  auto t = policy::clock::now();
  REQUIRE(ticks_until_move(p, quiet, t) == policy::quiet_ticks_to_gather);
  std::vector<long> holds_s;
  for (int round = 0; round < 9; ++round) {
    t += cpu_placement::tick;
    REQUIRE(p.next(queued, t) == move::spread);  // undone at once
    holds_s.push_back(std::chrono::duration_cast<std::chrono::seconds>(p.hold()).count());
    // Quiet from now on: it gathers only once the hold has passed.
    const int ticks = ticks_until_move(p, quiet, t);
    REQUIRE(ticks > 0);
    CHECK(ticks * cpu_placement::tick >= p.hold());
    CHECK(ticks * cpu_placement::tick <= p.hold() + cpu_placement::tick);
  }
  CHECK(holds_s == std::vector<long>{2, 4, 8, 16, 32, 64, 64, 64, 64});
  // A gathering that held for `settled` was right: the wait is short again.
  t += policy::settled;
  REQUIRE(p.next(quiet, t) == move::stay);
  t += cpu_placement::tick;
  REQUIRE(p.next(queued, t) == move::spread);
  CHECK(p.hold() == policy::first_hold);
}

TEST_CASE("cpu placement: a connection counts once per look however often it reads", "[cpu_placement]") {
  client_activity activity;
  std::uint32_t first = 0, second = 0, third = 0;
  CHECK(activity.take_active_connections() == 0);
  for (int i = 0; i < 100; ++i) activity.note(first);
  activity.note(second);
  CHECK(activity.take_active_connections() == 2);
  CHECK(activity.take_active_connections() == 0);  // nobody read since
  activity.note(first);
  activity.note(third);
  activity.note(third);
  CHECK(activity.take_active_connections() == 2);
}

TEST_CASE("cpu placement: runtime.cpu_placement takes adaptive or spread only", "[cpu_placement][config]") {
  config_sources src;
  src.file_required = false;
  src.overrides = {"runtime.cpu_placement=pinned"};
  try {
    load_config(src);
    FAIL("accepted");
  } catch (const config_error& e) {
    const std::string what = e.what();
    CHECK(what.find("runtime.cpu_placement") != std::string::npos);
    CHECK(what.find("pinned") != std::string::npos);
    CHECK(what.find("adaptive") != std::string::npos);
  }
  src.overrides = {};
  CHECK(load_config(src).runtime.cpu_placement == cpu_placement_mode::adaptive);
}

TEST_CASE("cpu placement: an idle daemon gathers its threads and many producers spread them until it is quiet again",
          "[live][cpu_placement]") {
  const auto allowed = allowed_cpus(1024);
  if (allowed.size() < 2 || !std::filesystem::exists("/proc/thread-self/schedstat")) {
    // CI machines have two cores and schedstat: without them the test checks nothing.
    REQUIRE_FALSE(in_ci());
    WARN("one usable CPU, or no per-thread schedstat: the daemon does not move its threads");
    return;
  }
  temp_dir dir;
  const std::uint16_t port = free_tcp_port();
  daemon_process d(dir.path(), {"--set", "admin.listen=127.0.0.1:" + std::to_string(port)});
  REQUIRE(d.wait_ready());
  // The CPU it names is the one this machine's WAB disk interrupts (or the lowest usable one).
  const int cpu = gather_cpu(allowed, disk_interrupt_cpus((dir.path() / "var/wab").string()));
  CHECK(d.log().find("cpu_placement=\"adaptive, gathering on cpu " + std::to_string(cpu) + "\"") != std::string::npos);
  auto gathered = [&] { return scrape_series(http_request(port, "/metrics").body, "weir_cpu_placement_gathered"); };
  REQUIRE(eventually([&] { return gathered() == 1; }));
  CHECK(all_threads_on(d.pid(), {cpu}));

  // Sixteen producers, each with many Buffered pushes in flight: more than one CPU's work.
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> acked{0};
  std::vector<std::thread> producers;
  for (int i = 0; i < 16; ++i)
    producers.emplace_back([&, i] {
      auto c = client::connection::connect_unix(d.socket_path());
      const std::string payload = "placement " + std::to_string(i);
      while (!stop.load()) {
        std::vector<std::span<const std::uint8_t>> batch(64, as_bytes(payload));
        if (c.push_batch(batch, client::durability::buffered).all_accepted()) acked += batch.size();
      }
    });
  const bool spread = eventually([&] { return gathered() == 0; });
  const bool threads_spread = eventually([&] { return all_threads_on(d.pid(), allowed); }, 5s);
  stop = true;
  for (auto& t : producers) t.join();
  INFO("acked " << acked.load());
  CHECK(acked.load() > 0);
  CHECK(spread);
  CHECK(threads_spread);
  const std::string metrics = http_request(port, "/metrics").body;
  CHECK(scrape_series(metrics, "weir_cpu_placement_moves_total{to=\"spread\"}") >= 1);

  // Quiet again: gathered after the hold.
  REQUIRE(eventually([&] { return gathered() == 1; }, 90s));
  CHECK(all_threads_on(d.pid(), {cpu}));
  CHECK(d.stop() == 0);

  // spread: the kernel places the threads; no series.
  temp_dir spread_dir;
  const std::uint16_t spread_port = free_tcp_port();
  daemon_process s(spread_dir.path(),
                   {"--set", "admin.listen=127.0.0.1:" + std::to_string(spread_port), "--set", "runtime.cpu_placement=spread"});
  REQUIRE(s.wait_ready());
  CHECK(s.log().find("cpu_placement=spread") != std::string::npos);
  std::this_thread::sleep_for(placement_policy::quiet_ticks_to_gather * cpu_placement::tick * 3);  // it would have gathered by now
  CHECK(all_threads_on(s.pid(), allowed));
  CHECK(scrape_series(http_request(spread_port, "/metrics").body, "weir_cpu_placement_gathered") == -1);
  CHECK(s.stop() == 0);
}
