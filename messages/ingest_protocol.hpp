#pragma once
// The ingest protocol: connection -> shard_writer -> fsync_group -> connection.
// Each actor's whole interface is one typed_actor below: the compiler checks
// every send, and a message an actor does not take is a compile error.
//
//   connection   -> shard_writer  ingest_request          one push, tracked push or batch,
//                                                         naming the ingest_client to answer
//   shard_writer -> connection    ingest_reply            Buffered: after the write;
//                                                         any tier: on a failure
//   shard_writer -> fsync_group   sync_request            Durable: the acks a sync releases
//                                 synced_acks             Durable: the acks of a sync the writer
//                                                         ran itself, to answer while the writer
//                                                         goes on to its next group
//   fsync_group  -> connection    ingest_reply            after the covering fdatasync
//
// The reply channel. A request may bring its connection's reply channel
// (a reply_queue, actors/reply_queue.hpp); its contract:
// - who fills it: the connection (replies it makes itself), and whoever
//   answers the request — the shard writer after its write or a sync it ran,
//   the fsync group after its sync, the replicator once peers hold the
//   records — each on its own thread, each slot once (a second fill is
//   ignored);
// - in what order replies leave: the connection opens a slot per frame, in
//   the order the frames came; a filled slot leaves only when every slot
//   before it has, from whichever thread filled the front, onto the socket
//   at once;
// - when the connection is told: (replies_written_atom) when a written
//   reply frees the room it waits for (strict or ordered ack mode), and when
//   a reply that closes the connection went out.
// Without a channel the writer and the fsync group send ingest_reply
// instead; the daemon's connections always bring one (one scheduler hand-off
// fewer per record), and the message is the protocol for every other client
// of a writer.
//   daemon       -> shard_writer  started_atom => done    answered once the writer has tried its
//                                                         first segment (the daemon opens its
//                                                         socket and says ready only after that)
//                                 shutdown_atom => done   write what is queued, sync, stop
//   shard_writer -> fsync_group   shutdown_atom => done   sync what is queued, stop
//   shard_writer -> itself        flush_atom              write the group the mailbox gave
//                                 retry_open_atom         offline: try to create a segment again
//   fsync_group  -> itself        (flush_atom, epoch)     deadline policy: the wait is over
//   shard_writer -> preparer      prepare_atom => spare_ready_atom
//                                                         fill the spare pool; answered once a
//                                                         spare is ready (a writer on a growing
//                                                         segment then moves onto it)
//
// Replies carry the encoded reply frame and the request's tag; a connection
// numbers its requests and writes replies in tag order.
#include <cstdint>
#include <memory>
#include <vector>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/type_id.hpp>

#include "messages/atoms.hpp"
#include "wire/bytes.hpp"

namespace weir {

using retry_open_atom = caf::atom_constant<caf::atom("retryopen")>;
using started_atom = caf::atom_constant<caf::atom("started")>;
using prepare_atom = caf::atom_constant<caf::atom("prepare")>;
using spare_ready_atom = caf::atom_constant<caf::atom("spareready")>;

namespace wab {
class segment_writer;
}
class reply_queue;
/// Where a request's reply goes straight in (see "The reply channel" above).
using reply_channel = std::shared_ptr<reply_queue>;

enum class ingest_kind : std::uint8_t { push, tracked, batch };

/// The reply frame for request `tag`, and how many of its records it acks
/// (the rest were refused with InternalError: the only reason a writer has),
/// so the connection counts outcomes without reading the frame back.
struct ingest_reply {
  std::uint64_t tag = 0;
  byte_buffer frame;
  std::uint32_t acked = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ingest_reply& x) {
  return f(caf::meta::type_name("weir::ingest_reply"), x.tag, x.frame, x.acked);
}

/// What the writer and the fsync group need of whoever sent a request: it
/// takes the reply. (The connection's full interface is connection_actor.)
using ingest_client_actor = caf::typed_actor<caf::reacts_to<ingest_reply>>;

/// Records for one shard, all of one tier (Buffered or Durable).
struct ingest_request {
  std::uint64_t tag = 0;
  ingest_client_actor reply_to;  // who gets the ingest_reply
  ingest_kind kind = ingest_kind::push;
  bool durable = false;
  bool replicated = false;  // durable too, and acked once peers hold it (cluster)
  byte_buffer body;          // the payload, or a whole PushBatch body
  std::vector<std::uint32_t> bounds;  // batch: offset and length of each record in body
  /// Where the reply goes straight in, when set. Local only: not inspected.
  reply_channel replies;

  std::size_t record_count() const { return kind == ingest_kind::batch ? bounds.size() / 2 : 1; }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ingest_request& x) {
  return f(caf::meta::type_name("weir::ingest_request"), x.tag, x.reply_to, x.kind, x.durable, x.replicated, x.body,
           x.bounds);
}

/// A Durable request waiting for its sync: whom to answer, and with which
/// frame once the sync returned (success or failure).
struct pending_ack {
  ingest_client_actor to;
  reply_channel replies;  // the request's, if it brought one
  std::uint64_t tag = 0;
  std::uint32_t records = 0;  // acked by on_success
  byte_buffer on_success;
  byte_buffer on_failure;
  /// Replicated: after the sync, the ack waits until peers hold the segment
  /// `replicate_sequence` up to `replicate_end` (0: not Replicated).
  std::uint64_t replicate_sequence = 0;
  std::uint64_t replicate_end = 0;
};

/// Make `segment` durable through everything written to it so far, then
/// answer `acks`.
struct sync_request {
  std::shared_ptr<wab::segment_writer> segment;
  std::vector<pending_ack> acks;
};

/// Acks whose sync already returned `rc` (the writer ran it): the fsync
/// group only writes their replies.
struct synced_acks {
  std::vector<pending_ack> acks;
  int rc = 0;
};

using shard_writer_actor = caf::typed_actor<caf::reacts_to<ingest_request>,
                                           caf::reacts_to<flush_atom>,
                                           caf::reacts_to<retry_open_atom>,
                                           caf::replies_to<started_atom>::with<done_atom>,
                                           caf::replies_to<shutdown_atom>::with<done_atom>>;

/// Prepares spare segment files off the ack path (writing a segment's worth
/// of zeros takes far longer than any ack may wait).
using segment_preparer_actor = caf::typed_actor<caf::replies_to<prepare_atom>::with<spare_ready_atom>>;

using fsync_group_actor = caf::typed_actor<caf::reacts_to<sync_request>,
                                          caf::reacts_to<synced_acks>,
                                          caf::reacts_to<flush_atom, std::uint64_t>,
                                          caf::replies_to<shutdown_atom>::with<done_atom>>;

}  // namespace weir

// Holds a file handle: local only, never serialized.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::sync_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::synced_acks)

CAF_BEGIN_TYPE_ID_BLOCK(weir, caf::first_custom_type_id)
CAF_ADD_TYPE_ID(weir, (weir::ingest_request))
CAF_ADD_TYPE_ID(weir, (weir::ingest_reply))
CAF_ADD_TYPE_ID(weir, (weir::sync_request))
CAF_ADD_TYPE_ID(weir, (weir::synced_acks))
CAF_END_TYPE_ID_BLOCK(weir)
