#pragma once
// A cluster node's own actors: the replica store, and the membership actor
// published on cluster.listen (plain TCP on loopback, or TLS with the
// cluster's private CA). The shard replicators belong to the pipeline, which
// wires them between its writers and drains; this hands them to membership
// and lets membership start failover drains in the pipeline.
#include <memory>

#include <caf/fwd.hpp>

#include "actors/membership.hpp"
#include "config/config.hpp"
#include "daemon/pipeline.hpp"
#include "messages/cluster_protocol.hpp"
#include "observability/cluster_metrics.hpp"

namespace weir {

/// Loads CAF's middleman (and its TLS module when cluster.tls is set) into
/// the actor system's configuration; nothing outside a cluster.
void prepare_cluster_config(caf::actor_system_config& caf_cfg, const config& cfg);

class cluster_runtime {
 public:
  /// Publishes this node; throws startup_error when cluster.listen cannot be bound.
  cluster_runtime(caf::actor_system& sys, const config& cfg, pipeline& shards, cluster_metrics& stats);
  ~cluster_runtime();
  /// Stops membership and waits until it is gone, so that no failover drain
  /// starts while the pipeline shuts down.
  void stop();
  cluster_runtime(const cluster_runtime&) = delete;
  cluster_runtime& operator=(const cluster_runtime&) = delete;

 private:
  caf::actor_system& sys_;
  replica_store_actor store_;
  membership_actor membership_;
};

}  // namespace weir
