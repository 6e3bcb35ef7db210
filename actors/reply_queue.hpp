#pragma once
// reply_queue: the replies one connection owes its peer, in the order its
// frames came. The connection actor opens a slot for every frame it takes;
// whoever answers the frame — the connection itself, the shard writer after
// its write, the fsync group after its sync — fills the slot on its own
// thread, and every filled slot at the front goes out on the socket then and
// there. A Durable ack thus leaves from the thread whose fdatasync covered
// it, with no hand-off back to the connection actor: under load that hand-off
// was a scheduler wake-up per record. What a written reply acked is counted,
// and the frame memory it held given back, at the moment it goes out.
//
// One mutex guards it, and nothing done under it blocks: the socket's write
// queues to the io thread what the socket cannot take at once.
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>

#include <caf/actor_addr.hpp>

#include "messages/connection_protocol.hpp"
#include "messages/ingest_protocol.hpp"
#include "observability/metrics.hpp"

namespace weir {

class frame_budget;

class reply_queue {
 public:
  using clock = std::chrono::steady_clock;

  /// What a reply answers: counted when it goes out.
  struct answers {
    tier_label tier = tier_label::none;  // of a push; `none` for other replies
    std::uint32_t records = 0;           // records the reply answers
    clock::time_point decoded{};
    std::uint64_t budget = 0;            // frame memory held until the reply is written
  };

  /// `stats` and `budget` may be null (tests).
  reply_queue(connection_io_ptr io, metrics* stats, std::shared_ptr<frame_budget> budget);
  ~reply_queue();
  reply_queue(const reply_queue&) = delete;
  reply_queue& operator=(const reply_queue&) = delete;

  /// The connection actor, told (replies_written_atom) when a reply frees
  /// the room it waits for, and when a close goes out.
  void set_owner(caf::actor_addr owner);

  /// A slot for the frame just taken; its tag.
  std::uint64_t open(const answers& what);
  /// Fills slot `tag` with its reply, of which `acked` records were acked
  /// (the rest refused). A slot filled already keeps its first reply. True
  /// when this call wrote a `close_after` reply and so closed the connection.
  bool fill(std::uint64_t tag, byte_buffer bytes, std::uint32_t acked, bool close_after = false);
  /// open() and fill() in one: a reply the connection makes itself.
  bool answer(const answers& what, byte_buffer bytes, bool close_after = false);
  /// Fills every open slot with `bytes`: whoever would have answered is
  /// gone. True when that wrote a `close_after` reply.
  bool fill_open(const byte_buffer& bytes);

  /// Whether a slot is free under `limit` replies owed. When none is, the
  /// next reply written wakes the owner (replies_written_atom).
  bool has_room(std::size_t limit);
  /// Whether a close went out (or the queue was abandoned).
  bool closed();
  /// Fills ignored while the connection lived: a second reply to a slot, or
  /// one for a tag never opened. None is expected but after fill_open (a
  /// gone writer's slots answered for it); tests count them.
  std::uint64_t ignored_fills();
  /// The connection ended: later fills write nothing; frame memory is given
  /// back and the socket let go.
  void abandon();

 private:
  struct slot {
    answers what;
    bool ready = false;
    bool close_after = false;
    std::uint32_t acked = 0;
    byte_buffer bytes;
  };

  /// Writes the filled slots at the front (mutex_ held). True when one of
  /// them closed the connection.
  bool write_ready();
  void count(const slot& s);
  void owed_changed(bool before);

  connection_io_ptr io_;
  metrics* stats_;
  std::shared_ptr<frame_budget> budget_;
  std::mutex mutex_;
  std::deque<slot> slots_;
  std::uint64_t first_tag_ = 0;  // tag of slots_.front()
  std::uint64_t next_tag_ = 0;   // tag of the next slot opened
  std::uint64_t ignored_fills_ = 0;
  bool closed_ = false;
  bool wake_wanted_ = false;
  caf::actor_addr owner_;
};

/// Answers a request. `direct`: the reply goes straight into the
/// connection's reply queue (when the request brought one) and onto the
/// socket from this thread; otherwise by message to the connection actor.
/// Direct saves the connection's thread a wake-up, and costs this thread a
/// socket write. Who answers directly (decisions 0004 and 0022):
/// - the shard writer, every reply it gives: after its write (Buffered), a
///   refusal, and every reply of a sync it ran itself with nothing else
///   waiting in its mailbox (it syncs only when its fsync group is idle, so
///   no other sync waits behind the writes);
/// - the fsync group, a sync's lone reply, and every reply of a sync the
///   writer ran and handed over (`synced_acks`: more waited for the writer,
///   which went on to its next write and sync). The replies of a group it
///   synced itself go by message: sixteen to sixty-four socket writes in a
///   row there delayed its next sync by more than the hand-offs cost;
/// - the replicator, every Replicated reply.
/// The actor tests and the simulations bring a queue over a fake socket,
/// as a connection does.
template <class Self>
void deliver_reply(Self* self, const std::shared_ptr<reply_queue>& queue, const ingest_client_actor& to,
                   ingest_reply reply, bool direct) {
  if (queue && direct) queue->fill(reply.tag, std::move(reply.frame), reply.acked);
  else self->send(to, std::move(reply));
}

}  // namespace weir
