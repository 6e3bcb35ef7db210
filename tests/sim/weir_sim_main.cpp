// weir-sim: runs the deterministic simulation (tests/sim/simulation.hpp).
//
//   weir-sim --seed N            one run, every step traced, the daemon's log shown
//   weir-sim --seeds A..B        a sweep: one line per failure, then the totals
//   options: --steps N (default 250), --jobs N (sweep threads, default 1),
//            --sabotage NAME (break the model on purpose: the sweep must fail),
//            --daemon-wiring (the writer syncs by itself as in the daemon)
//
// Exits 0 when every run held every invariant, 1 when one failed, 2 on bad usage.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sim/seed_args.hpp"
#include "sim/simulation.hpp"

using namespace weir::sim;

namespace {

int usage(const std::string& why) {
  std::cerr << "weir-sim: " << why << "\n"
            << "usage: weir-sim --seed N | --seeds A..B [--steps N] [--jobs N] [--sabotage NAME] [--daemon-wiring]\n";
  return 2;
}

struct totals {
  std::uint64_t seeds = 0, steps = 0, crashes = 0, faults = 0, acked = 0, failures = 0;
  std::uint64_t by_writer = 0, by_fsync_group = 0, handed = 0;
  std::array<std::uint64_t, fault_kinds> by_kind{};
};

int sweep(std::uint64_t first, std::uint64_t last, unsigned steps, unsigned jobs, sabotage broken, sync_wiring wiring) {
  totals t;
  std::mutex mutex;
  std::atomic<std::uint64_t> next{first};
  const auto started = std::chrono::steady_clock::now();
  auto worker = [&] {
    for (std::uint64_t seed = next++; seed <= last; seed = next++) {
      const auto r = run_simulation({seed, steps, broken, wiring, nullptr});
      std::lock_guard<std::mutex> guard(mutex);
      ++t.seeds;
      t.steps += r.steps;
      t.crashes += r.crashes;
      t.faults += r.faults;
      t.acked += r.acked;
      t.by_writer += r.durable_by_writer;
      t.by_fsync_group += r.durable_by_fsync_group;
      t.handed += r.handed_replies;
      for (std::size_t k = 0; k < fault_kinds; ++k) t.by_kind[k] += r.fault_counts[k];
      if (!r.ok) {
        ++t.failures;
        std::cout << r.failure_line() << std::endl;
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (auto& th : threads) th.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << "sim: faults by kind:";
  for (std::size_t k = 0; k < fault_kinds; ++k)
    std::cout << ' ' << name_of(static_cast<fault_kind>(k)) << '=' << t.by_kind[k];
  std::cout << "; " << seconds << " s\n";
  std::cout << "sim: seeds=" << t.seeds << " steps=" << t.steps << " crashes=" << t.crashes << " faults=" << t.faults
            << " acked=" << t.acked << " (Durable acks written in the writer's steps " << t.by_writer << ", in the fsync group's "
            << t.by_fsync_group << "; replies handed to it " << t.handed << ") failures=" << t.failures << std::endl;
  return t.failures == 0 ? 0 : 1;
}

int one(std::uint64_t seed, unsigned steps, sabotage broken, sync_wiring wiring) {
  const auto r = run_simulation({seed, steps, broken, wiring, &std::cout});
  std::cout << "sim: seed=" << seed << " steps=" << r.steps << " lives=" << r.lives << " crashes=" << r.crashes
            << " faults=" << r.faults << " records=" << r.records << " acked=" << r.acked
            << " delivered=" << r.delivered << " deliveries=" << r.deliveries << " digest=" << std::hex << r.digest
            << std::dec << '\n';
  std::cout << "sim: Durable acks written in the writer's steps=" << r.durable_by_writer
            << " in the fsync group's=" << r.durable_by_fsync_group << " replies handed to it=" << r.handed_replies
            << '\n';
  std::cout << "sim: faults by kind:";
  for (std::size_t k = 0; k < fault_kinds; ++k)
    std::cout << ' ' << name_of(static_cast<fault_kind>(k)) << '=' << r.fault_counts[k];
  std::cout << " quarantined=" << r.quarantined << '\n';
  if (!r.ok) {
    std::cout << r.failure_line() << std::endl;
    return 1;
  }
  std::cout << "sim: ok" << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::uint64_t seed = 0, first = 0, last = 0, steps = 250, jobs = 1;
  bool have_seed = false, have_range = false;
  sabotage broken = sabotage::none;
  sync_wiring wiring = sync_wiring::separate;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::cout << "usage: weir-sim --seed N | --seeds A..B [--steps N] [--jobs N] [--sabotage NAME] [--daemon-wiring]\n\n"
                   "Runs the deterministic simulation of weir's WAB and delivery actors over a simulated\n"
                   "disk with faults and crashes (docs/testing.md). --seed N replays one seed with every\n"
                   "step printed; --seeds A..B sweeps a range (--jobs in parallel) and prints the totals.\n"
                   "--sabotage breaks the model on purpose (the run must then fail).\n"
                   "--daemon-wiring lets the shard writer sync by itself and hand replies to its fsync\n"
                   "group as the daemon does (its own seeds; without it, every sync is the fsync group's).\n"
                   "Exits 0 when every run held every invariant, 1 when one failed, 2 on bad usage.\n";
      return 0;
    }
    if (a == "--daemon-wiring") {
      wiring = sync_wiring::daemon;
      continue;
    }
    if (i + 1 >= args.size()) return usage("missing value after " + a);
    const std::string& v = args[++i];
    if (a == "--seed") {
      if (!parse_u64(v, seed)) return usage("--seed wants a number, got '" + v + "'");
      have_seed = true;
    } else if (a == "--seeds") {
      if (!parse_seed_range(v, first, last)) return usage("--seeds wants A..B with A <= B, got '" + v + "'");
      have_range = true;
    } else if (a == "--steps") {
      if (!parse_u64(v, steps) || steps == 0 || steps > 1000000) return usage("--steps wants 1..1000000");
    } else if (a == "--jobs") {
      if (!parse_u64(v, jobs) || jobs == 0 || jobs > 64) return usage("--jobs wants 1..64");
    } else if (a == "--sabotage") {
      if (!parse_sabotage(v, broken)) return usage("unknown sabotage '" + v + "'");
    } else {
      return usage("unknown option " + a);
    }
  }
  if (have_seed == have_range) return usage("give exactly one of --seed and --seeds");
  if (have_seed) return one(seed, static_cast<unsigned>(steps), broken, wiring);
  return sweep(first, last, static_cast<unsigned>(steps), static_cast<unsigned>(jobs), broken, wiring);
}
