#pragma once
// replicator: one per shard on every cluster node, on its own thread (it
// reads segment files). It ships the shard's WAB to every peer that is up —
// whole records in their on-disk form, in order, up to chunk_bytes per
// message and max_in_flight messages per peer — and holds the Replicated acks
// the shard's sync released until cluster.replicas - 1 peers have synced
// their records (or refuses them at their deadline). Everything the shard
// writes is shipped, whatever its tier: a peer's copy is then the origin's
// segment byte for byte, and a survivor delivering it gives every record the
// id its origin would have.
//
// Interface:    replicator_actor (messages/cluster_protocol.hpp)
// Messages in:  (appended_atom / sealed_atom, sequence, end)  from the shard writer
//               peer_update                 from the cluster node: a peer up or gone
//               replication_wait            from the fsync group or shard writer
//               (confirmed_atom, sequence)  from the drain: segments below are delivered
//               (tick_atom)                 deadlines (self-sent)
//               (shutdown_atom) => done     refuse what waits, stop
// Messages out: (position_atom, origin, shard), replica_chunk, replica_trim to peers;
//               the held acks' replies
// Per peer:     down -> positioning (asked where its copy ends) -> shipping
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <caf/fwd.hpp>

#include "actors/actor_thread.hpp"
#include "messages/cluster_protocol.hpp"
#include "wab/file_io.hpp"

namespace weir {

struct cluster_metrics;

struct replicator_settings {
  std::uint16_t node = 0;  // this node: the origin of what it ships
  std::uint64_t incarnation = 0;  // this node's life (a peer's copy of another is no copy of this one)
  std::uint16_t shard = 0;
  std::string shard_dir;
  std::uint32_t copies_needed = 1;  // peers that must hold a record (cluster.replicas - 1)
  std::uint64_t chunk_bytes = 1024 * 1024;
  std::uint32_t max_in_flight = 4;  // chunks per peer
  /// A chunk or position request unanswered this long: the peer is asked again.
  std::chrono::milliseconds request_timeout{5000};
  std::chrono::milliseconds tick{20};  // how often deadlines are checked
  std::shared_ptr<wab::file_io> io;
  cluster_metrics* stats = nullptr;  // may be null (tests)
  actor_thread thread = actor_thread::own;
};

replicator_actor spawn_replicator(caf::actor_system& sys, replicator_settings settings);

}  // namespace weir
