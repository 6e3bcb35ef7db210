// weir-cluster-sim: runs the deterministic cluster simulation
// (tests/sim/cluster/cluster_simulation.hpp).
//
//   weir-cluster-sim --seed N       one run, every step traced, the nodes' log shown
//   weir-cluster-sim --seeds A..B   a sweep: one line per failure, then the totals
//   options: --steps N (default 400), --nodes N (3..7, default 3), --jobs N (sweep
//            threads), --sabotage NAME (break the model on purpose: the run must fail)
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

#include "sim/cluster/cluster_simulation.hpp"
#include "sim/seed_args.hpp"

using namespace weir::sim;

namespace {

const char* usage_line =
    "usage: weir-cluster-sim --seed N | --seeds A..B [--steps N] [--nodes N] [--jobs N] [--sabotage NAME]\n";

int usage(const std::string& why) {
  std::cerr << "weir-cluster-sim: " << why << "\n" << usage_line;
  return 2;
}

void add(cluster_sim_result& t, const cluster_sim_result& r) {
  t.steps += r.steps;
  t.crashes += r.crashes;
  t.disks_lost += r.disks_lost;
  t.partitions += r.partitions;
  t.lives += r.lives;
  t.records += r.records;
  t.replicated_acked += r.replicated_acked;
  t.durable_acked += r.durable_acked;
  t.refused += r.refused;
  t.refused_cut_off += r.refused_cut_off;
  t.delivered += r.delivered;
  t.deliveries += r.deliveries;
  t.lost_with_every_holder += r.lost_with_every_holder;
  t.packets += r.packets;
  t.duplicated += r.duplicated;
  t.lost += r.lost;
  t.cuts += r.cuts;
}

void print(const std::string& prefix, const cluster_sim_result& t) {
  std::cout << prefix << " steps=" << t.steps << " lives=" << t.lives << " crashes=" << t.crashes
            << " disks_lost=" << t.disks_lost << " partitions=" << t.partitions << " records=" << t.records
            << " acked_replicated=" << t.replicated_acked << " acked_durable=" << t.durable_acked
            << " refused=" << t.refused << " refused_cut_off=" << t.refused_cut_off << " delivered=" << t.delivered
            << " deliveries=" << t.deliveries << " lost_with_every_holder=" << t.lost_with_every_holder << " packets=" << t.packets << " duplicated=" << t.duplicated
            << " lost=" << t.lost << " links_cut=" << t.cuts << '\n';
}

int sweep(std::uint64_t first, std::uint64_t last, cluster_sim_options base, unsigned jobs) {
  cluster_sim_result t;
  std::uint64_t seeds = 0, failures = 0;
  std::mutex mutex;
  std::atomic<std::uint64_t> next{first};
  const auto started = std::chrono::steady_clock::now();
  auto worker = [&] {
    for (std::uint64_t seed = next++; seed <= last; seed = next++) {
      auto o = base;
      o.seed = seed;
      const auto r = run_cluster_simulation(o);
      std::lock_guard<std::mutex> guard(mutex);
      ++seeds;
      add(t, r);
      if (!r.ok) {
        ++failures;
        std::cout << r.failure_line() << std::endl;
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (auto& th : threads) th.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  print("cluster-sim: seeds=" + std::to_string(seeds) + " failures=" + std::to_string(failures), t);
  std::cout << "cluster-sim: " << seconds << " s" << std::endl;
  return failures == 0 ? 0 : 1;
}

int one(cluster_sim_options o) {
  o.trace = &std::cout;
  const auto r = run_cluster_simulation(o);
  print("cluster-sim: seed=" + std::to_string(o.seed), r);
  std::cout << "cluster-sim: digest=" << std::hex << r.digest << std::dec << '\n';
  if (!r.ok) {
    std::cout << r.failure_line() << std::endl;
    return 1;
  }
  std::cout << "cluster-sim: ok" << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  cluster_sim_options o;
  std::uint64_t seed = 0, first = 0, last = 0, steps = o.steps, nodes = o.nodes, jobs = 1;
  bool have_seed = false, have_range = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::cout << usage_line
                << "\nRuns the deterministic simulation of a weir cluster: whole nodes (WAB, replicators,\n"
                   "replica store, membership, failover) over simulated disks and a simulated network that\n"
                   "delays, duplicates and loses packets and partitions; nodes crash, restart and lose their\n"
                   "disks (docs/testing.md). --seed N replays one seed with every step printed; --seeds A..B\n"
                   "sweeps a range (--jobs in parallel) and prints the totals. --sabotage acks-without-peers\n"
                   "or renumbers-new-life breaks the model on purpose (the run must then fail).\n"
                   "Exits 0 when every run held every invariant, 1 when one failed, 2 on bad usage.\n";
      return 0;
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
    } else if (a == "--nodes") {
      if (!parse_u64(v, nodes) || nodes < 3 || nodes > 7) return usage("--nodes wants 3..7");
    } else if (a == "--jobs") {
      if (!parse_u64(v, jobs) || jobs == 0 || jobs > 64) return usage("--jobs wants 1..64");
    } else if (a == "--sabotage") {
      if (!parse_cluster_sabotage(v, o.broken)) return usage("unknown sabotage '" + v + "'");
    } else {
      return usage("unknown option " + a);
    }
  }
  if (have_seed == have_range) return usage("give exactly one of --seed and --seeds");
  o.steps = static_cast<unsigned>(steps);
  o.nodes = static_cast<unsigned>(nodes);
  if (have_seed) {
    o.seed = seed;
    return one(o);
  }
  return sweep(first, last, o, static_cast<unsigned>(jobs));
}
