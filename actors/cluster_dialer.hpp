#pragma once
// cluster_dialer: how membership reaches a peer. It answers
// (connect_atom, host, port) as CAF's middleman actor does, but first has an
// authenticated link made to host:port (`dial`, the cluster gate's TLS
// connect), then has CAF take that link (the cluster bridge's middleman
// actor, asked for the name the link is offered under). A peer that cannot
// be reached, or does not prove a node's certificate, is an error answer.
//
// Interface:    (connect_atom, host, port) => (node_id, strong_actor_ptr, set<string>);
//               locally (dialed_atom, request, name, error) from the dial callback
// Messages out: (connect_atom, name, 1) to the bridge's middleman actor
#include <cstdint>
#include <functional>
#include <string>

#include <caf/fwd.hpp>
#include <caf/io/middleman_actor.hpp>

namespace weir {

/// Makes an authenticated link to host:port and calls `done` (on any
/// thread) with the name it is offered under, or with "" and why not.
using link_dial = std::function<void(const std::string& host, std::uint16_t port,
                                     std::function<void(std::string name, std::string error)> done)>;

caf::actor spawn_cluster_dialer(caf::actor_system& sys, link_dial dial, caf::io::middleman_actor middleman);

}  // namespace weir
