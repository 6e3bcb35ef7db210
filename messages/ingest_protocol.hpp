#pragma once
// The ingest protocol: connection -> shard_writer -> fsync_group -> connection.
//
//   connection   -> shard_writer  ingest_request          one push, tracked push or batch
//   shard_writer -> connection    ingest_reply            Buffered: after the write;
//                                                         any tier: on a failure
//   shard_writer -> fsync_group   sync_request            Durable: the acks a sync releases
//   fsync_group  -> connection    ingest_reply            after the covering fdatasync
//   daemon       -> shard_writer  shutdown_atom => done   write what is queued, sync, stop
//   shard_writer -> fsync_group   shutdown_atom => done   sync what is queued, stop
//   shard_writer -> shard_writer  retry_open_atom         offline: try to create a segment again
//
// Replies carry the encoded reply frame and the request's tag; a connection
// numbers its requests and writes replies in tag order.
#include <cstdint>
#include <memory>
#include <vector>

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/type_id.hpp>

#include "messages/atoms.hpp"
#include "messages/wire/bytes.hpp"

namespace weir {

using retry_open_atom = caf::atom_constant<caf::atom("retryopen")>;

namespace wab {
class segment_writer;
}

enum class ingest_kind : std::uint8_t { push, tracked, batch };

/// Records for one shard, all of one tier (Buffered or Durable).
struct ingest_request {
  std::uint64_t tag = 0;
  std::uint8_t kind = 0;     // ingest_kind
  bool durable = false;
  byte_buffer body;          // the payload, or a whole PushBatch body
  std::vector<std::uint32_t> bounds;  // batch: offset and length of each record in body

  ingest_kind what() const { return static_cast<ingest_kind>(kind); }
  std::size_t record_count() const { return what() == ingest_kind::batch ? bounds.size() / 2 : 1; }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ingest_request& x) {
  return f(caf::meta::type_name("weir::ingest_request"), x.tag, x.kind, x.durable, x.body, x.bounds);
}

/// The reply frame for request `tag`.
struct ingest_reply {
  std::uint64_t tag = 0;
  byte_buffer frame;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ingest_reply& x) {
  return f(caf::meta::type_name("weir::ingest_reply"), x.tag, x.frame);
}

/// A Durable request waiting for its sync: whom to answer, and with which
/// frame once the sync returned (success or failure).
struct pending_ack {
  caf::actor to;
  std::uint64_t tag = 0;
  std::uint32_t records = 0;
  byte_buffer on_success;
  byte_buffer on_failure;
};

/// Make `segment` durable through everything written to it so far, then
/// answer `acks`. With no acks it seals a segment the writer rotated away from.
struct sync_request {
  std::shared_ptr<wab::segment_writer> segment;
  std::vector<pending_ack> acks;
};

}  // namespace weir

// Holds a file handle: local only, never serialized.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::sync_request)

CAF_BEGIN_TYPE_ID_BLOCK(weir, caf::first_custom_type_id)
CAF_ADD_TYPE_ID(weir, (weir::ingest_request))
CAF_ADD_TYPE_ID(weir, (weir::ingest_reply))
CAF_ADD_TYPE_ID(weir, (weir::sync_request))
CAF_END_TYPE_ID_BLOCK(weir)
