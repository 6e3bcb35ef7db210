#pragma once
// The cluster protocols (docs/cluster.md). Node <-> node messages travel over
// CAF's middleman, so every type here is serializable and registered in the
// weir_cluster type-ID block on every node; the local ones (between a node's
// own actors) say so.
//
// node <-> node, at a peer's published cluster_node:
//   (hello_atom, from_node, from_listen, protocol) => (this_node, protocol, taken)
//                                               after a connect: who calls (the caller is
//                                               the answerer's handle to it), who answers,
//                                               and the cluster protocol each speaks
//   peer_heartbeat                              every cluster.heartbeat_ms: alive,
//                                               and what replicas the sender holds
//   replica_chunk => replica_position           records of the origin's segment, in
//                                               order; answered once synced on the replica
//   (position_atom, origin, shard) => replica_position
//                                               where the replica's copy ends: the
//                                               origin ships from there
//   replica_trim                                the origin delivered every segment below
//                                               `sequence`: the replica may drop them
//
// local:
//   cluster_node -> replicator   peer_update    a peer came up (with its handle) or went away
//   shard_writer -> replicator   (appended_atom, sequence, end, records in the segment),
//                                (sealed_atom, sequence, end) as to the drain
//   fsync group / shard_writer -> replicator
//                                replication_wait  Replicated acks, synced here, waiting for
//                                                  cluster.replicas - 1 peers
//   drain -> replicator          (confirmed_atom, sequence)  segments below it are delivered
//   cluster_node -> replica_store  the replica messages above, delegated; (held_atom);
//                                (retire_atom, origin, incarnation): the origin lives as
//                                `incarnation`; a copy of another of its lives is retired
//                                (moved aside and delivered by this node)
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/type_id.hpp>
#include <caf/typed_actor.hpp>

#include "messages/drain_protocol.hpp"
#include "messages/ingest_protocol.hpp"
#include "wire/bytes.hpp"

namespace weir {

using hello_atom = caf::atom_constant<caf::atom("hello")>;
using position_atom = caf::atom_constant<caf::atom("position")>;
using held_atom = caf::atom_constant<caf::atom("held")>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;
using confirmed_atom = caf::atom_constant<caf::atom("confirmed")>;
using connect_to_atom = caf::atom_constant<caf::atom("connectto")>;
/// membership to itself: a failover drain it is shutting down has not ended in time.
using kill_drain_atom = caf::atom_constant<caf::atom("killdrain")>;
using release_atom = caf::atom_constant<caf::atom("release")>;
/// membership -> replica store: copies of an origin's other lives are retired.
using retire_atom = caf::atom_constant<caf::atom("retire")>;
/// cluster dialer to itself: a link it asked for is made (or not).
using dialed_atom = caf::atom_constant<caf::atom("dialed")>;

/// Whole records of one origin segment, in their on-disk form, starting at
/// byte `offset` of the segment (and record `first_index`), from the
/// origin's life `incarnation` (wab/incarnation_file.hpp).
struct replica_chunk {
  std::uint16_t origin = 0;
  std::uint16_t shard = 0;
  std::uint64_t sequence = 0;
  std::uint64_t offset = 0;
  std::uint64_t first_index = 1;
  std::uint64_t records = 0;  // how many `bytes` holds
  byte_buffer bytes;
  bool sealed = false;  // the origin sealed the segment where these records end
  /// Starts a segment although the replica's previous one is not complete:
  /// the origin delivered (and no longer has) what the copy lacks.
  bool skips = false;
  std::uint64_t incarnation = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, replica_chunk& x) {
  return f(caf::meta::type_name("weir::replica_chunk"), x.origin, x.shard, x.incarnation, x.sequence, x.offset,
           x.first_index, x.records, x.bytes, x.sealed, x.skips);
}

/// Where a replica's copy of an origin's shard ends: the next chunk starts at
/// `offset` of segment `sequence` with record `next_index` (sequence 0: it
/// holds nothing). `sealed`: that segment is complete on the replica.
/// `incarnation`: the origin's life the copy is of (0: not known yet).
struct replica_position {
  std::uint16_t origin = 0;
  std::uint16_t shard = 0;
  std::uint64_t sequence = 0;
  std::uint64_t offset = 0;
  std::uint64_t next_index = 1;
  bool sealed = false;
  std::uint64_t incarnation = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, replica_position& x) {
  return f(caf::meta::type_name("weir::replica_position"), x.origin, x.shard, x.incarnation, x.sequence, x.offset,
           x.next_index, x.sealed);
}

/// Alive, and what the sender holds for other origins (failover picks the
/// survivor whose copy reaches furthest): `held` is its replica store's
/// answer when `held_known` (a node whose store has not answered yet, or
/// not for a long time, is no candidate), and `delivering` the copies it
/// delivers as the failover owner.
struct peer_heartbeat {
  std::uint16_t from = 0;
  std::vector<replica_position> held;
  bool held_known = false;
  std::vector<replica_position> delivering;
  std::uint64_t incarnation = 0;  // the sender's own life
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, peer_heartbeat& x) {
  return f(caf::meta::type_name("weir::peer_heartbeat"), x.from, x.incarnation, x.held, x.held_known, x.delivering);
}

/// The origin's drain delivered every segment of `shard` below `sequence`.
struct replica_trim {
  std::uint16_t origin = 0;
  std::uint16_t shard = 0;
  std::uint64_t sequence = 0;
  std::uint64_t incarnation = 0;  // the origin's life: a copy of another is not trimmed by it
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, replica_trim& x) {
  return f(caf::meta::type_name("weir::replica_trim"), x.origin, x.shard, x.sequence, x.incarnation);
}

/// The layout of every node <-> node message above. Nodes that speak
/// different versions do not join each other (each says so in its log)
/// rather than misread each other's heartbeats. Version 2: heartbeats carry
/// `held_known` and `delivering`; weir before it had no version in its hello.
/// Version 3: links are weir's own TLS (a certificate naming weir-node-<id>),
/// a hello is taken only from the node its link proved, and copies, chunks
/// and heartbeats carry the origin's incarnation.
constexpr std::uint16_t cluster_protocol_version = 3;

/// The actor each node publishes on cluster.listen.
using cluster_node_actor =
    caf::typed_actor<caf::replies_to<hello_atom, std::uint16_t, std::string, std::uint16_t>::with<std::uint16_t, std::uint16_t, bool>,
                     caf::reacts_to<peer_heartbeat>, caf::replies_to<replica_chunk>::with<replica_position>,
                     caf::replies_to<position_atom, std::uint16_t, std::uint16_t>::with<replica_position>,
                     caf::reacts_to<replica_trim>>;

/// A peer came up (`node` answers at `handle`) or went away (`up` false).
struct peer_update {
  std::uint16_t node = 0;
  bool up = false;
  cluster_node_actor handle;
};

/// Replicated acks whose records are synced here and end at `end_offset` of
/// segment `sequence`; answered with on_success once cluster.replicas - 1
/// peers have synced that far, with on_failure at `deadline_ns` (the actor clock).
struct replication_wait {
  std::uint64_t sequence = 0;
  std::uint64_t end_offset = 0;
  std::int64_t deadline_ns = 0;
  std::vector<pending_ack> acks;
};

/// Who hears that the drain delivered every segment below a sequence.
using confirm_listener_actor = caf::typed_actor<caf::reacts_to<confirmed_atom, std::uint64_t>>;

/// One shard's replication, on the origin.
using replicator_actor = segment_listener_actor::extend<caf::reacts_to<appended_atom, std::uint64_t, std::uint64_t, std::uint64_t>,
                                                        caf::reacts_to<peer_update>,
                                                        caf::reacts_to<replication_wait>,
                                                        caf::reacts_to<confirmed_atom, std::uint64_t>,
                                                        caf::reacts_to<tick_atom>,
                                                        caf::replies_to<shutdown_atom>::with<done_atom>>;

/// What this node holds for others, written and synced.
using replica_store_actor =
    caf::typed_actor<caf::replies_to<replica_chunk>::with<replica_position>,
                     caf::replies_to<position_atom, std::uint16_t, std::uint16_t>::with<replica_position>,
                     caf::reacts_to<replica_trim>,
                     caf::replies_to<held_atom>::with<std::vector<replica_position>>,
                     caf::replies_to<release_atom, std::uint16_t, std::uint16_t, bool>::with<done_atom>,
                     caf::reacts_to<retire_atom, std::uint16_t, std::uint64_t>,
                     caf::reacts_to<flush_atom>,
                     caf::replies_to<shutdown_atom>::with<done_atom>>;

}  // namespace weir

// Local only: they hold actor handles and reply queues.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::peer_update)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::replication_wait)

CAF_BEGIN_TYPE_ID_BLOCK(weir_cluster, caf::id_block::weir::end)
CAF_ADD_TYPE_ID(weir_cluster, (weir::replica_chunk))
CAF_ADD_TYPE_ID(weir_cluster, (weir::replica_position))
CAF_ADD_TYPE_ID(weir_cluster, (weir::peer_heartbeat))
CAF_ADD_TYPE_ID(weir_cluster, (weir::replica_trim))
CAF_ADD_TYPE_ID(weir_cluster, (weir::peer_update))
CAF_ADD_TYPE_ID(weir_cluster, (weir::replication_wait))
CAF_ADD_TYPE_ID(weir_cluster, (std::vector<weir::replica_position>))
CAF_END_TYPE_ID_BLOCK(weir_cluster)
