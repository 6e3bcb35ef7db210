#include "sim/producer_actor.hpp"

#include <caf/mailbox_element.hpp>
#include <caf/monitorable_actor.hpp>
#include <caf/rtti_pair.hpp>

namespace weir::sim {

void producer_actor::enqueue(caf::mailbox_element_ptr what, caf::execution_unit* host) {
  if (what) {
    const auto& content = what->content();
    if (content.size() == 1 && content.matches(0, caf::make_rtti_pair<ingest_reply>())) {
      const auto* sender = what->sender ? dynamic_cast<const caf::monitorable_actor*>(what->sender->get()) : nullptr;
      observer_->on_reply(id_, content.get_as<ingest_reply>(0), sender ? sender->name() : "");
      return;  // consumed: the producer never needs a turn of its own
    }
  }
  caf::event_based_actor::enqueue(std::move(what), host);  // exit messages and the like
}

caf::behavior producer_actor::make_behavior() {
  return {[](const ingest_reply&) {}};
}

}  // namespace weir::sim
