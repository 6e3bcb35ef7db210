#pragma once
// The protocol between a client socket (driven by Asio) and its connection
// actor (which owns all protocol state).
//
//   socket -> actor:  (socket_data_atom, byte_buffer)  bytes read; the socket reads
//                                                      on while the actor holds fewer
//                                                      than two chunks it has not
//                                                      consumed() (connection_io)
//                     (socket_eof_atom)                peer finished sending: the owed
//                                                      replies still go out, then close
//                     (socket_closed_atom)             socket error or timeout: gone
//                     (socket_writable_atom)           the replies queued for the peer fell
//                                                      below half the write limit again
//   daemon -> actor:  (shutdown_atom)                  stop reading; close once the owed
//                                                      replies are written
//   writer, fsync group -> actor: ingest_reply         the answer to one request (when the
//                                                      request brought no reply_queue)
//   reply_queue -> actor: (replies_written_atom)       a reply went out and freed the slot
//                                                      the actor waited for
//   actor -> itself:  (budget_retry_atom)              ask for frame memory again
//   actor -> socket:  connection_io::write / consumed / hold_frame / close, each posted to
//                     the socket's own thread when it must act, so the actor never
//                     blocks; set_replies_owed, a flag under the socket's lock.
#include <chrono>
#include <memory>

#include <caf/atom.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/ingest_protocol.hpp"
#include "wire/bytes.hpp"

namespace weir {

using socket_data_atom = caf::atom_constant<caf::atom("sockdata")>;
using socket_eof_atom = caf::atom_constant<caf::atom("sockeof")>;
using socket_closed_atom = caf::atom_constant<caf::atom("sockclosed")>;
using socket_writable_atom = caf::atom_constant<caf::atom("sockwrite")>;
using budget_retry_atom = caf::atom_constant<caf::atom("budgetretr")>;
using replies_written_atom = caf::atom_constant<caf::atom("replieswri")>;

/// One client connection's actor. It is an ingest_client_actor too: the
/// writer and the fsync group see only its ingest_reply.
using connection_actor = ingest_client_actor::extend<caf::reacts_to<socket_data_atom, byte_buffer>,
                                                     caf::reacts_to<socket_eof_atom>,
                                                     caf::reacts_to<socket_closed_atom>,
                                                     caf::reacts_to<socket_writable_atom>,
                                                     caf::reacts_to<shutdown_atom>,
                                                     caf::reacts_to<budget_retry_atom>,
                                                     caf::reacts_to<replies_written_atom>>;

class connection_io {
 public:
  virtual ~connection_io() = default;
  /// Queues bytes for the peer; writes go out in call order.
  virtual void write(byte_buffer bytes) = 0;
  /// The actor has decoded every byte of the `chunks` chunks it was handed
  /// since the last call (the first call, with none, starts the reading).
  /// The socket reads ahead while the actor holds fewer than two chunks it
  /// has not consumed, so a busy connection's next read needs no hand-off,
  /// and a peer still has at most two reads' worth held by the daemon.
  /// `frames_done` counts the frames the actor has taken whole so far. While
  /// `mid_frame`, a deadline runs from the first call that found the peer in
  /// the middle of a frame until a call with a higher `frames_done`: a peer
  /// that takes longer than listen.read_timeout_ms over one frame (a
  /// slowloris) is closed silently.
  virtual void consumed(bool mid_frame, std::uint64_t frames_done, std::uint64_t chunks) = 0;
  /// Whether the connection owes its peer a reply. The socket reads on
  /// while replies are owed (a strict producer's next frame then finds the
  /// read waiting, with no hand-off to the io thread); while they are owed
  /// the connection waits on the daemon, not on its peer, and is no
  /// candidate to make room for a new connection.
  virtual void set_replies_owed(bool owed) = 0;
  /// The actor holds the start of a frame it cannot take yet (its payload
  /// waits for frame memory) and consumes nothing: the frame's deadline runs
  /// all the same, so waiting for memory other peers hold is no way around it.
  virtual void hold_frame(std::uint64_t frames_done) = 0;
  /// True while more reply bytes wait for the peer than the write limit: the
  /// actor then decodes nothing more and the socket reads nothing more (a
  /// peer that sends but never reads cannot grow the daemon), and
  /// socket_writable_atom says when to go on.
  virtual bool write_blocked() const = 0;
  /// Closes the socket once every queued write has gone out.
  virtual void close() = 0;
  /// Closes the socket now, queued writes dropped (frame memory taken back
  /// from a peer that stopped sending: it may not read either).
  virtual void abort() = 0;
  /// Bytes from the peer wait unread in the kernel: the daemon, not the
  /// peer, is behind.
  virtual bool unread_input() const = 0;
  /// How long the transport may go quiet while it recovers a lost packet
  /// (TCP: three round trips or retransmission timeouts; zero for a Unix socket): a
  /// peer quiet for less is not taken to have stalled.
  virtual std::chrono::nanoseconds loss_recovery_time() const { return {}; }
};

using connection_io_ptr = std::shared_ptr<connection_io>;

}  // namespace weir
