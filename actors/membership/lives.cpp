// membership: which life of each origin the replica store keeps: copies of any other
// are retired and delivered (docs/cluster.md, "Node lives").
#include "actors/membership/membership_state.hpp"

namespace weir::membership_internal {

/// The store learns an origin's life; it retires copies of any other
/// (asked again on every tick: a copy a failover drain had is retired
/// once it is handed back).
void membership_state::tell_life(std::uint16_t origin, std::uint64_t incarnation) {
  self_->send(s_.store, retire_atom::value, origin, incarnation);
}

/// An origin's latest life is the one it says in its heartbeats; for one
/// not heard, the one whose copy, among every node's, reaches furthest (a
/// later life numbers its segments after an earlier one's). This node's
/// copies of another life are retired, so that none is left behind when
/// the latest is delivered.
void membership_state::retire_earlier_lives() {
  std::map<std::uint16_t, replica_position> furthest;
  auto consider = [&](const replica_position& h) {
    if (h.incarnation == 0 || h.sequence == 0 || h.origin == s_.node) return;
    auto [it, fresh] = furthest.try_emplace(h.origin, h);
    if (!fresh && it->second.sequence < h.sequence) it->second = h;
  };
  for (const auto& h : own_held_) consider(h);
  for (const auto& p : peers_)
    for (const auto& h : p.held) consider(h);
  for (const auto& p : peers_) {
    if (!p.connected || p.incarnation == 0) continue;
    furthest.erase(p.node);
    tell_life(p.node, p.incarnation);
  }
  for (const auto& [origin, h] : furthest) tell_life(origin, h.incarnation);
}

}  // namespace weir::membership_internal
