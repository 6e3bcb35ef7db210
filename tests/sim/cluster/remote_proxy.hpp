#pragma once
// How one simulated node sees an actor of another: CAF's actor proxy, with
// the other node's id, whose messages go to the network actor as packets
// rather than to a BASP broker. Killed when its link ends: its monitors get
// down messages, and what it is sent afterwards is dropped (as by CAF's
// proxy of a lost connection).
#include <cstdint>

#include <caf/actor.hpp>
#include <caf/actor_proxy.hpp>

namespace weir::sim {

class remote_proxy final : public caf::actor_proxy {
 public:
  remote_proxy(caf::actor_config& cfg, caf::actor network, std::uint16_t viewer, std::uint16_t owner,
               std::uint64_t link, caf::strong_actor_ptr target);

  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* host) override;
  void kill_proxy(caf::execution_unit* host, caf::error reason) override;

  std::uint16_t owner() const { return owner_; }
  const caf::strong_actor_ptr& target() const { return target_; }

 private:
  caf::actor network_;
  std::uint16_t viewer_ = 0;  // the node it lives on
  std::uint16_t owner_ = 0;   // the node of the actor it stands for
  std::uint64_t link_ = 0;    // the connection between the two it belongs to
  caf::strong_actor_ptr target_;
};

}  // namespace weir::sim
