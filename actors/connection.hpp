#pragma once
// connection: one actor per client socket. It decodes frames in the order
// the protocol mandates, sends records to its shard's writer, and has its
// replies written strictly in submission order (its reply_queue). In
// `strict` mode it takes no new frame while a reply is owed; in `ordered`
// mode up to `max_inflight`.
//
// Interface:    connection_actor (messages/connection_protocol.hpp)
// Messages in:  (socket_data_atom, byte_buffer), (socket_closed_atom)
//               ingest_reply                    from the shard_writer / fsync_group
//               (shutdown_atom)                 stop reading; close once every
//                                               owed reply is written
//               down_msg                        the shard_writer stopped: every
//                                               owed and later push gets a Nack
//               (socket_writable_atom)          the peer reads its replies again
//               (budget_retry_atom)             try again for a large frame's memory (self-sent)
//               (replies_written_atom)          its reply_queue wrote a reply and freed the
//                                               slot a waiting frame needs
// Messages out: ingest_request to the shard_writer, carrying the connection's
//               reply_queue (actors/reply_queue.hpp): the writer and the fsync
//               group fill it on their own threads, and replies leave in
//               submission order from whichever thread completes the front
// Calls out:    connection_io::write / consumed / hold_frame / set_replies_owed / close
// States:       reading -> paused (replies owed at the limit, replies not
//               read by the peer, or waiting for frame memory) -> reading ...
//               -> closing (protocol error or shutdown) -> done
//               Behaviours (become): reading() (paused is its may_take_frame()
//               saying no) and closing(), which decodes nothing more and only
//               writes what is owed.
// On the way out it stops monitoring its writer: the writer lives as long
// as the daemon and would otherwise keep every closed connection's memory.
#include <cstdint>

#include <caf/fwd.hpp>
#include <caf/stateful_actor.hpp>

#include "config/config.hpp"
#include "messages/connection_protocol.hpp"
#include "messages/ingest_protocol.hpp"
#include "actors/frame_budget.hpp"

namespace weir {

class metrics;

struct connection_settings {
  std::uint32_t payload_cap = 16u * 1024 * 1024;
  std::uint32_t max_batch_records = 1024;
  ack_mode mode = ack_mode::ordered;
  std::uint32_t max_inflight = 256;
  shard_writer_actor writer;  // this connection's shard_writer, for the connection's life
  /// runtime.direct_replies: requests carry the reply channel (else every
  /// reply comes back by message).
  bool direct_replies = true;
  /// In a cluster: Replicated pushes are taken (else they get the transient Nack).
  bool replicated_tier = false;
  /// Shared by all connections; null: unlimited (tests).
  std::shared_ptr<frame_budget> budget;
  /// Payloads up to this size need no share of the budget.
  std::uint32_t budget_above = 64 * 1024;
  /// A connection waiting for its share asks again this often.
  std::uint32_t budget_retry_ms = 5;
  /// A share whose payload had no bytes this long is taken back when others wait.
  std::uint32_t budget_stall_ms = 1000;
  /// listen.read_timeout_ms: a share held this long at least whose payload
  /// is further behind than the part of it gone by is taken back too.
  std::uint32_t budget_read_timeout_ms = 30000;
  metrics* stats = nullptr;  // may be null (tests)
};

connection_actor spawn_connection(caf::actor_system& sys, connection_io_ptr io,
                            const connection_settings& settings);

}  // namespace weir
