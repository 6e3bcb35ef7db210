#pragma once
// One simulated cluster node: its disk, which outlives its crashes (until it
// is lost and replaced by an empty one), and one life of its process — the
// daemon's own parts as the daemon wires them (runtime/pipeline.cpp, and the
// replica store and membership with the settings of runtime/actor_settings),
// over the node's simulated disk, on the shared test scheduler. Only the links
// differ: membership dials through the simulated network, and learns who a
// link's node is from it (transport/cluster_gate.hpp does both with TLS).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "actors/membership.hpp"
#include "actors/replica_store.hpp"
#include "config/config.hpp"
#include "runtime/pipeline.hpp"
#include "sim/fault_plan.hpp"
#include "sim/producer_actor.hpp"
#include "sim/sim_file_io.hpp"
#include "sinks/sink.hpp"

namespace weir::sim {

class sim_network;

/// What survives a node's crash: its data directory on its simulated disk.
struct node_disk {
  std::uint16_t node = 0;
  std::string root;  // data_dir
  fault_plan plan;
  std::shared_ptr<sim_file_io> io;
  std::uint64_t incarnation = 0;  // data_dir/incarnation (0: none yet)
  unsigned disks = 1;             // how many disks it has had

  /// An empty data directory on a new disk (the first, or one replacing a lost one).
  void fresh(sim_rng rng);
};

class cluster_node_life {
 public:
  /// Recovers the node's WAB and starts every actor (none has run yet).
  /// `first_if_empty`: where a WAB that holds nothing numbers its first
  /// segments (runtime/node_life.cpp takes the wall clock). Throws
  /// wab::recovery_error or startup_error as the daemon's startup would.
  cluster_node_life(caf::actor_system& sys, const config& cfg, node_disk& disk, sim_network& net,
                    const caf::actor& identity, std::shared_ptr<sink_factory> sink, reply_observer* replies,
                    const std::vector<std::size_t>& producers, std::uint64_t first_if_empty, sim_rng& rng);
  ~cluster_node_life();
  cluster_node_life(const cluster_node_life&) = delete;
  cluster_node_life& operator=(const cluster_node_life&) = delete;

  shard_writer_actor writer(std::uint16_t shard) const { return pipeline_->writers().at(shard); }
  /// The simulated producer with global index `p` (one of this node's).
  caf::actor producer(std::size_t p) const;
  /// Its connection (null when `p` is not one of this node's).
  sim_connection* connection(std::size_t p) const;
  /// Replies its producers' channels ignored (sim_connection::stray_replies).
  std::uint64_t stray_replies() const;
  std::uint64_t incarnation() const { return incarnation_; }
  bool new_life() const { return new_life_; }

  /// The crash: membership, the replica store and the producers are told to
  /// exit at once; the pipeline's actors when this object goes, after those
  /// exits have run (membership's failover hooks call into the pipeline).
  /// The disk must be frozen and the node off the network first, so that
  /// nothing they still do lands or leaves.
  void kill();

 private:
  std::unique_ptr<pipeline> pipeline_;
  replica_store_actor store_;
  membership_actor membership_;
  caf::actor dialer_;
  struct producer_end {
    std::size_t index;  // global
    caf::actor actor;
    std::shared_ptr<sim_connection> connection;
  };
  const producer_end* find_producer(std::size_t p) const;
  std::vector<producer_end> producers_;
  std::uint64_t incarnation_ = 0;
  bool new_life_ = false;
  bool killed_ = false;
};

}  // namespace weir::sim
