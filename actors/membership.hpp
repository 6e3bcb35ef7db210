#pragma once
// membership: this node's place in the cluster, and the actor it publishes
// on cluster.listen. Of each pair of nodes, the one whose cluster.listen sorts
// first connects (again and again, with capped backoff, while the other is
// unreachable) and says hello; the other takes the caller of that hello as
// its handle to it. (Two CAF nodes connecting to each other at the same
// moment can leave both connection attempts hanging.) Both exchange
// heartbeats and keep each peer up, suspect (connected but silent for three heartbeats) or
// down (not connected). The shard replicators hear of every peer that comes
// up or goes away. Replica traffic from peers goes to the replica store.
//
// Failover: once a peer has not been up for cluster.failover_after_ms, one
// survivor per shard of that peer delivers the peer's replica to the sink:
// among this node and the peers not failed over themselves, the one whose
// copy of the shard reaches furthest (heartbeats carry every node's copy
// ends, and the copies it delivers), the lowest node id on a tie, decided
// on views that have settled (failover_owner.hpp). A shard a peer says it
// delivers is not taken; two survivors that took one anyway (a restart, a
// long partition) settle it by the same rule, and the other stops. When
// the peer is up again, its failover drains stop and it delivers its own
// backlog (duplicates carry the same ids; nothing is lost). Only once those
// drains have stored their last cursor and ended does the replica store take
// the copy back (and rewind its cursor): the other order could leave a
// drain's cursor, past records the origin adds later, on the copy. Every
// ownership decision is logged with node ids.
//
// Who a peer is comes from its link, not its words: a hello is taken only
// when the node id it claims is the one the sender's link proved
// (settings.identity), a called peer only when its answer names the node its
// link proved; heartbeats and replica traffic count only from the handle
// taken so, and a node ships or trims only its own records.
//
// Node lives: a peer's heartbeats say which life it is; the replica store
// retires this node's copies of any other life of it (and delivers them).
// For a peer not heard, the life whose copy reaches furthest, among every
// node's copies of it, counts as its latest.
//
// The state and its work by job: actors/membership/ (membership_state.hpp).
//
// Interface:    cluster_node_actor (messages/cluster_protocol.hpp), published;
//               locally also (tick_atom), (connect_to_atom, address index)
//               and (kill_drain_atom, drain)
// Messages out: (connect_atom, host, port) to the middleman; hello and
//               peer_heartbeat to peers; peer_update to the replicators;
//               replica messages delegated to the replica store
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <caf/fwd.hpp>
#include <caf/io/middleman_actor.hpp>

#include "messages/cluster_protocol.hpp"
#include "messages/drain_protocol.hpp"

namespace weir {

struct cluster_metrics;

/// What failover needs from the daemon: start delivering `origin`'s
/// replica of `shard` (its directory made ready by the replica store), and
/// give up the delivery of `origin`'s replica (of every shard, or of one):
/// `stop` hands back those drains, which membership then shuts down (and
/// waits for).
struct failover_hooks {
  std::function<void(std::uint16_t origin, std::uint16_t shard)> start;
  std::function<std::vector<drain_actor>(std::uint16_t origin, std::optional<std::uint16_t> shard)> stop;
};

struct membership_settings {
  std::uint16_t node = 0;
  std::uint64_t incarnation = 0;   // this node's life (wab/incarnation_file.hpp), in its heartbeats
  std::string listen;              // this node's cluster.listen
  std::vector<std::string> peers;  // host:port
  std::chrono::milliseconds heartbeat{500};
  std::chrono::milliseconds failover_after{10000};
  std::chrono::milliseconds reconnect_max{5000};
  caf::io::middleman_actor middleman;  // answers (connect_atom, host, port): the cluster dialer
  // Answers (get_atom, caf::node_id) with (node_id, name, node): the node id
  // the link a CAF node is on proved by its certificate (0: no such link).
  // A peer is whom its link proves, never whom its hello claims.
  caf::actor identity;
  replica_store_actor store;
  std::vector<replicator_actor> replicators;  // this node's shards
  failover_hooks failover;
  cluster_metrics* stats = nullptr;
  /// Told the node ids of the peers this node knows (any it has taken),
  /// whenever that set grows: the cluster gate treats other nodes' links
  /// as strangers'.
  std::function<void(std::set<std::uint16_t>)> members;
};

using membership_actor = cluster_node_actor::extend<caf::reacts_to<tick_atom>,
                                                    caf::reacts_to<connect_to_atom, std::uint32_t>,
                                                    caf::reacts_to<kill_drain_atom, caf::actor>>;

membership_actor spawn_membership(caf::actor_system& sys, membership_settings settings);

}  // namespace weir
