// membership: heartbeats, and each peer up, suspect (connected but silent for three
// heartbeats) or down; the replicators hear of every change.
#include "actors/membership/membership_state.hpp"

namespace weir::membership_internal {

void membership_state::on_heartbeat(peer_heartbeat& h) {
  for (auto& p : peers_) {
    if (p.node != h.from) continue;
    if (!sent_by(h.from)) return;  // only a node speaks for itself
    p.last_heard = now();
    if (h.incarnation != 0 && h.incarnation != p.incarnation) {
      p.incarnation = h.incarnation;
      tell_life(p.node, h.incarnation);
    }
    p.held = std::move(h.held);
    p.held_known = h.held_known;
    p.delivering = std::move(h.delivering);
    refresh(p);
    return;
  }
}

/// A heartbeat goes out on every tick, whatever the replica store is
/// doing; failover is decided only on a tick that has the store's own
/// copy ends (a busy store answers late, and only one question is out).
void membership_state::on_tick() {
  self_->delayed_send(self_, s_.heartbeat, tick_atom::value);
  if (asking_store_) {
    // A store that has not answered for failover_after makes this node no
    // candidate: it could not release a copy to deliver it either.
    if (now() - answered_at_ >= s_.failover_after) held_known_ = false;
    return beat(false);
  }
  asking_store_ = true;
  self_->request(s_.store, std::chrono::seconds(60), held_atom::value)
      .then(
          [this](std::vector<replica_position>& held) {
            asking_store_ = false;
            own_held_ = std::move(held);
            held_known_ = true;
            answered_at_ = now();
            beat(true);
          },
          [this](caf::error&) {
            asking_store_ = false;
            held_known_ = false;  // a store that fails cannot hand a copy to a drain
            beat(false);
          });
}

void membership_state::beat(bool store_answered) {
  std::vector<replica_position> delivering;
  for (const auto& [origin, shard] : owned_) delivering.push_back(find(own_held_, origin, shard));
  for (auto& p : peers_) {
    if (p.connected)
      self_->send(p.handle, peer_heartbeat{s_.node, own_held_, held_known_, delivering, s_.incarnation});
    refresh(p);
  }
  if (!store_answered) return;
  retire_earlier_lives();
  give_up_contested();
  decide_failover();
}

peer_state_label membership_state::state_of(const peer& p) const {
  if (!p.connected) return peer_state_label::down;
  return now() - p.last_heard > 3 * s_.heartbeat ? peer_state_label::suspect : peer_state_label::up;
}

/// Tells the replicators when a peer's up-ness changed; keeps the metrics.
void membership_state::refresh(peer& p) {
  const auto state = state_of(p);
  const bool up = state == peer_state_label::up;
  if (up != p.announced_up) {
    p.announced_up = up;
    (up ? p.up_since : p.not_up_since) = now();
    if (!up) log::warn("cluster peer not up", {{"peer", p.address}, {"node", std::to_string(p.node)},
                                               {"state", name_of(state)}});
    for (const auto& r : s_.replicators) self_->send(r, peer_update{p.node, up, up ? p.handle : cluster_node_actor{}});
  }
  // A failover ends once its origin has stayed up a while: a node that
  // crashes soon after each start does not end it (and have it taken again
  // failover_after later) at every start.
  if (up && now() - p.up_since >= settle()) end_failover(p);
  if (s_.stats) {
    const double heard =
        p.last_heard == clock::time_point{} ? -1 : std::chrono::duration<double>(now() - p.last_heard).count();
    s_.stats->set_peer(p.address, p.node, state, heard);
  }
}

}  // namespace weir::membership_internal
