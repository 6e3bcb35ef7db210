#include "actors/cluster_dialer.hpp"

#include <map>
#include <set>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include "messages/cluster_protocol.hpp"

namespace weir {

namespace {

struct dialer_state {
  static inline const char* name = "cluster_dialer";
  std::uint64_t next = 0;
  std::map<std::uint64_t, caf::response_promise> waiting;  // by request
};

caf::behavior dialer(caf::stateful_actor<dialer_state>* self, link_dial dial, caf::io::middleman_actor middleman) {
  return {
      [=](caf::connect_atom, const std::string& host, std::uint16_t port) {
        const auto id = ++self->state.next;
        self->state.waiting[id] = self->make_response_promise();
        caf::actor me = caf::actor_cast<caf::actor>(self);
        dial(host, port, [me, id](std::string name, std::string error) {
          caf::anon_send(me, dialed_atom::value, id, std::move(name), std::move(error));
        });
      },
      [=](dialed_atom, std::uint64_t id, const std::string& name, const std::string& error) {
        auto it = self->state.waiting.find(id);
        if (it == self->state.waiting.end()) return;
        auto promise = std::move(it->second);
        self->state.waiting.erase(it);
        if (!error.empty()) return promise.deliver(caf::make_error(caf::sec::cannot_connect_to_node, error));
        promise.delegate(middleman, caf::connect_atom::value, name, std::uint16_t{1});
      },
  };
}

}  // namespace

caf::actor spawn_cluster_dialer(caf::actor_system& sys, link_dial dial, caf::io::middleman_actor middleman) {
  return sys.spawn(dialer, std::move(dial), std::move(middleman));
}

}  // namespace weir
