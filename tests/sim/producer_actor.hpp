#pragma once
// A simulated producer's connection as the writer and the fsync_group see
// it: the sender of ingest_requests, whose replies go into the daemon's own
// reply channel (actors/reply_queue.hpp) over a socket that hands every
// reply to the harness at the instant it is written — the instant the ack
// would leave the daemon — so "was the record durable when its ack left?" is
// checked then, on whichever path wrote it: straight from the writer or the
// fsync group, or by message through the producer actor, as the connection
// actor takes them.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string_view>

#include <caf/event_based_actor.hpp>

#include "messages/ingest_protocol.hpp"

namespace weir::sim {

class reply_observer {
 public:
  virtual ~reply_observer() = default;
  /// `reply.tag`: the tag the harness gave the request. `from`: the name of
  /// the actor whose step wrote the reply ("shard_writer", "fsync_group"),
  /// so a sweep can count which paths answered.
  virtual void on_reply(std::size_t producer, const ingest_reply& reply, std::string_view from) = 0;
};

/// One producer's connection: its reply channel and what the harness called
/// each request.
class sim_connection {
 public:
  sim_connection(reply_observer* observer, std::size_t producer);
  ~sim_connection();
  sim_connection(const sim_connection&) = delete;
  sim_connection& operator=(const sim_connection&) = delete;

  /// Opens the request's slot in the reply channel, as the connection
  /// actor does for each frame, and makes it carry the channel. The
  /// request's tag becomes the channel's; the harness's is kept for the
  /// reply.
  void attach(ingest_request& req);
  /// A reply that came by message (ingest_reply).
  void take(ingest_reply reply);
  /// Replies the channel ignored: a second one for a request, or one for a
  /// request never sent.
  std::uint64_t stray_replies() const;

 private:
  class socket;
  void written(byte_buffer bytes);

  reply_observer* observer_;
  std::size_t producer_;
  std::deque<std::uint64_t> harness_tags_;  // of the open slots, in order
  reply_channel channel_;
};

/// Takes the replies sent by message, in the sender's own step (before
/// anything else can run): the connection actor's part of the channel.
class producer_actor final : public caf::event_based_actor {
 public:
  producer_actor(caf::actor_config& cfg, std::shared_ptr<sim_connection> connection)
      : caf::event_based_actor(cfg), connection_(std::move(connection)) {}

  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* host) override;
  caf::behavior make_behavior() override;

 private:
  std::shared_ptr<sim_connection> connection_;
};

/// The name of the actor the simulation is running now ("" outside a step).
std::string_view running_actor();
/// Set by the simulation's runner around each step.
void set_running_actor(std::string_view name);

}  // namespace weir::sim
