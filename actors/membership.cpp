#include "actors/membership.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/failure_log.hpp"
#include "actors/membership/membership_state.hpp"

namespace weir {

namespace {

using membership_internal::membership_state;

membership_actor::behavior_type membership_behavior(membership_state::pointer self, membership_settings s) {
  log_exceptions(self, "membership");
  // What a peer of another weir version sends does not match the interface:
  // the operator learns why the node did not join, instead of a bare error.
  self->set_default_handler([self](caf::scheduled_actor*, caf::message_view& x) -> caf::result<caf::message> {
    self->state.on_unknown(x.content());
    return caf::sec::unexpected_message;
  });
  self->state.init(self, std::move(s));
  return {
      [=](hello_atom, std::uint16_t from, std::string& address, std::uint16_t protocol) {
        return self->state.on_hello(from, address, protocol);
      },
      [=](peer_heartbeat& h) { self->state.on_heartbeat(h); },
      [=](replica_chunk& c) -> caf::result<replica_position> {
        if (!self->state.sent_by(c.origin)) return caf::make_error(caf::sec::request_receiver_down);
        return self->delegate(self->state.store(), std::move(c));
      },
      [=](position_atom, std::uint16_t origin, std::uint16_t shard) -> caf::result<replica_position> {
        if (!self->state.from_member()) return caf::make_error(caf::sec::request_receiver_down);
        return self->delegate(self->state.store(), position_atom::value, origin, shard);
      },
      [=](replica_trim& t) {
        if (self->state.sent_by(t.origin)) self->send(self->state.store(), std::move(t));
      },
      [=](tick_atom) { self->state.on_tick(); },
      [=](connect_to_atom, std::uint32_t i) { self->state.on_connect_to(i); },
      [=](kill_drain_atom, const caf::actor& d) { self->state.kill_drain(d); },
  };
}

}  // namespace

membership_actor spawn_membership(caf::actor_system& sys, membership_settings settings) {
  return sys.spawn(membership_behavior, std::move(settings));
}

}  // namespace weir
