#pragma once
// A simulated producer ("connection") as the writer and the fsync_group see
// it: the sender of ingest_requests and the receiver of their replies. The
// reply is handed to the harness the moment it is sent — in the sending
// actor's own step, before anything else can run — so "was the record
// durable when its ack left?" is checked at exactly that instant.
#include <cstddef>
#include <string_view>

#include <caf/event_based_actor.hpp>

#include "messages/ingest_protocol.hpp"

namespace weir::sim {

class reply_observer {
 public:
  virtual ~reply_observer() = default;
  /// `from`: the name of the actor that sent it ("shard_writer",
  /// "fsync_group"), so a sweep can count which paths answered.
  virtual void on_reply(std::size_t producer, const ingest_reply& reply, std::string_view from) = 0;
};

class producer_actor final : public caf::event_based_actor {
 public:
  producer_actor(caf::actor_config& cfg, reply_observer* observer, std::size_t id)
      : caf::event_based_actor(cfg), observer_(observer), id_(id) {}

  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* host) override;
  caf::behavior make_behavior() override;

 private:
  reply_observer* observer_;
  std::size_t id_;
};

}  // namespace weir::sim
