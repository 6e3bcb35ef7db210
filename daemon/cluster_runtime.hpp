#pragma once
// A cluster node's own parts: the replica store, the membership actor, and
// the links that carry it (cluster_gate.hpp: weir's TLS on cluster.listen
// and for every call; cluster_bridge.hpp: those links handed to CAF's
// middleman, which has no port of its own). The shard replicators belong to
// the pipeline, which wires them between its writers and drains; this hands
// them to membership and lets membership start failover drains in the pipeline.
#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>
#include <caf/fwd.hpp>

#include "actors/membership.hpp"
#include "actors/replica_store.hpp"
#include "config/config.hpp"
#include "runtime/pipeline.hpp"
#include "messages/cluster_protocol.hpp"
#include "observability/cluster_metrics.hpp"

namespace weir {

class cluster_bridge;
class cluster_gate;

/// Loads CAF's middleman (and the cluster's message types) into the actor
/// system's configuration; nothing outside a cluster.
void prepare_cluster_config(caf::actor_system_config& caf_cfg, const config& cfg);

class cluster_runtime {
 public:
  /// Binds cluster.listen and joins; throws startup_error when the TLS
  /// files cannot be used or cluster.listen cannot be bound.
  /// `incarnation`: this node's life (runtime/node_life.hpp).
  cluster_runtime(caf::actor_system& sys, const config& cfg, pipeline& shards, cluster_metrics& stats,
                  std::uint64_t incarnation);
  ~cluster_runtime();
  /// Stops membership and waits until it is gone, so that no failover drain
  /// starts while the pipeline shuts down; then closes every link.
  void stop();
  /// SIGHUP: reads cluster.tls again; new links use it, links made keep
  /// theirs. "" when in use, else why not (the old files stay in use).
  std::string reload_tls(const config& cfg);
  cluster_runtime(const cluster_runtime&) = delete;
  cluster_runtime& operator=(const cluster_runtime&) = delete;

 private:
  /// The links and membership, once the store is up.
  void join(caf::actor_system& sys, const config& cfg, std::shared_ptr<boost::asio::ssl::context> tls,
            membership_settings ms, cluster_metrics& stats);

  caf::actor_system& sys_;
  replica_store_actor store_;
  std::unique_ptr<cluster_bridge> bridge_;
  std::shared_ptr<cluster_gate> gate_;
  caf::actor dialer_;
  membership_actor membership_;
};

}  // namespace weir
