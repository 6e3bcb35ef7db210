#pragma once
// Stands in for CAF's BASP broker in actor tests: answers (get_atom,
// node_id) with the node id a link "proved", which the test sets. In one
// process every sender is on the local node, so one answer covers them all.
#include <cstdint>
#include <memory>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/node_id.hpp>

namespace weir::test {

/// A function with an argument, not a capturing lambda: CAF 0.17 spawning
/// a function without arguments binds a reference to a null pointer (UBSan).
inline caf::behavior fake_identity(caf::event_based_actor*, std::shared_ptr<std::uint16_t> proven) {
  return {
      [proven](caf::get_atom, const caf::node_id& nid) {
        return caf::make_message(nid, "weir-node-" + std::to_string(*proven), *proven);
      },
  };
}

inline caf::actor spawn_fake_identity(caf::actor_system& sys, std::shared_ptr<std::uint16_t> proven) {
  return sys.spawn(fake_identity, std::move(proven));
}

}  // namespace weir::test
