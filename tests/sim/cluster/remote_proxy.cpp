#include "sim/cluster/remote_proxy.hpp"

#include <memory>

#include <caf/mailbox_element.hpp>
#include <caf/send.hpp>

#include "sim/cluster/sim_network.hpp"

namespace weir::sim {

remote_proxy::remote_proxy(caf::actor_config& cfg, caf::actor network, std::uint16_t viewer, std::uint16_t owner,
                           std::uint64_t link, caf::strong_actor_ptr target)
    : caf::actor_proxy(cfg),
      network_(std::move(network)),
      viewer_(viewer),
      owner_(owner),
      link_(link),
      target_(std::move(target)) {}

void remote_proxy::enqueue(caf::mailbox_element_ptr what, caf::execution_unit*) {
  if (!network_ || !what) return;
  auto p = std::make_shared<packet>();
  p->from = viewer_;
  p->to = owner_;
  p->link = link_;
  p->sender = std::move(what->sender);
  p->sender_node = viewer_;
  // A message this node forwards from a third node's actor travels as that actor's.
  if (auto* via = dynamic_cast<remote_proxy*>(caf::actor_cast<caf::abstract_actor*>(p->sender))) {
    p->sender_node = via->owner_;
    p->sender = via->target_;
  }
  p->receiver = target_;
  p->mid = what->mid;
  p->content = what->move_content_to_message();
  caf::anon_send(network_, std::move(p));
}

void remote_proxy::kill_proxy(caf::execution_unit* host, caf::error reason) {
  network_ = nullptr;
  target_ = nullptr;
  cleanup(std::move(reason), host);
}

}  // namespace weir::sim
