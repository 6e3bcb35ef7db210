#pragma once
// A deterministic simulation of a weir cluster: three nodes (or more), each
// the daemon's real actors (pipeline, replicators, replica store,
// membership) over its own simulated disk, all on CAF's test scheduler in
// one process, joined by a simulated network (sim_network.hpp) and
// delivering to one simulated sink. One 64-bit seed picks every step:
// producers push Replicated and Durable records to the node they are
// pinned to, actors run in an order the seed picks, packets arrive, are
// duplicated or lost (which cuts their link), simulated time advances, the
// network is partitioned and healed, the sink changes mood, and nodes
// crash — some losing their disk — and start again. The invariants
// (cluster_checker.hpp) are checked as acks and deliveries happen; at the
// end — the network healed, every node up, the sink healthy — every node
// must take a Replicated push again, and every acked record owed to the
// sink must reach it.
#include <cstdint>
#include <iosfwd>
#include <string>

namespace weir::sim {

/// Deliberate breakage, to prove the checker catches it (never on in a sweep).
enum class cluster_sabotage : std::uint8_t {
  none,
  /// The nodes run with cluster.replicas 1 while the checker expects 2: a
  /// node acks Replicated pushes that no peer holds (a minority that acks).
  acks_without_peers,
  /// A node that starts with an empty WAB numbers its segments from 1, as
  /// weir did before node lives: a new life reuses its earlier life's places.
  renumbers_new_life,
};

const char* name_of(cluster_sabotage s);
bool parse_cluster_sabotage(const std::string& name, cluster_sabotage& out);

struct cluster_sim_options {
  std::uint64_t seed = 1;
  unsigned steps = 400;
  unsigned nodes = 3;
  cluster_sabotage broken = cluster_sabotage::none;
  /// Every step as it happens (and the nodes' own log).
  std::ostream* trace = nullptr;
};

struct cluster_sim_result {
  bool ok = true;
  std::uint64_t seed = 0;
  unsigned failed_step = 0;
  std::string invariant, details;
  std::string replay;  // the command line that replays this run

  unsigned steps = 0, crashes = 0, disks_lost = 0, partitions = 0, lives = 0;
  std::uint64_t records = 0, replicated_acked = 0, durable_acked = 0, refused = 0, refused_cut_off = 0;
  std::uint64_t deliveries = 0, delivered = 0;
  std::uint64_t lost_with_every_holder = 0;  // acked, and every disk that held it was lost
  std::uint64_t packets = 0, duplicated = 0, lost = 0, cuts = 0;
  /// A digest of everything that happened: equal for two runs of one seed.
  std::uint64_t digest = 0;

  /// "cluster-sim: FAILED seed=... step=... invariant=...: ...; replay with: ..."
  std::string failure_line() const;
};

cluster_sim_result run_cluster_simulation(const cluster_sim_options& options);

}  // namespace weir::sim
