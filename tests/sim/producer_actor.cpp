#include "sim/producer_actor.hpp"

#include <string>

#include <caf/mailbox_element.hpp>
#include <caf/monitorable_actor.hpp>
#include <caf/rtti_pair.hpp>

#include "actors/reply_queue.hpp"

namespace weir::sim {

namespace {
std::string running_name;
}

std::string_view running_actor() { return running_name; }
void set_running_actor(std::string_view name) { running_name.assign(name); }

/// The socket under the reply channel: what is written goes to the harness.
class sim_connection::socket final : public connection_io {
 public:
  explicit socket(sim_connection* owner) : owner_(owner) {}
  void write(byte_buffer bytes) override { owner_->written(std::move(bytes)); }
  void consumed(bool, std::uint64_t, std::uint64_t) override {}
  void set_replies_owed(bool) override {}
  void hold_frame(std::uint64_t) override {}
  bool write_blocked() const override { return false; }
  void close() override {}
  void abort() override {}
  bool unread_input() const override { return false; }

 private:
  sim_connection* owner_;
};

sim_connection::sim_connection(reply_observer* observer, std::size_t producer)
    : observer_(observer), producer_(producer),
      channel_(std::make_shared<reply_queue>(std::make_shared<socket>(this), nullptr, nullptr)) {}

// Requests still at a writer hold the channel: nothing they fill later may
// reach this connection once it is gone.
sim_connection::~sim_connection() { channel_->abandon(); }

void sim_connection::attach(ingest_request& req) {
  harness_tags_.push_back(req.tag);
  req.tag = channel_->open({});
  req.replies = channel_;
}

void sim_connection::take(ingest_reply reply) { channel_->fill(reply.tag, std::move(reply.frame), reply.acked); }

std::uint64_t sim_connection::stray_replies() const { return channel_->ignored_fills(); }

void sim_connection::written(byte_buffer bytes) {
  // Every request is answered by a non-empty frame, and the channel writes
  // them in the order their slots were opened.
  const std::uint64_t tag = harness_tags_.front();
  harness_tags_.pop_front();
  observer_->on_reply(producer_, ingest_reply{tag, std::move(bytes), 0}, running_actor());
}

void producer_actor::enqueue(caf::mailbox_element_ptr what, caf::execution_unit* host) {
  if (what) {
    const auto& content = what->content();
    if (content.size() == 1 && content.matches(0, caf::make_rtti_pair<ingest_reply>())) {
      connection_->take(content.get_as<ingest_reply>(0));
      return;  // consumed: the producer never needs a turn of its own
    }
  }
  caf::event_based_actor::enqueue(std::move(what), host);  // exit messages and the like
}

caf::behavior producer_actor::make_behavior() {
  return {[](const ingest_reply&) {}};
}

}  // namespace weir::sim
