// membership: who delivers a failed node's replica (failover_owner.hpp), contests
// between survivors, and the end of a failover once its origin stays up.
#include "actors/membership/membership_state.hpp"

namespace weir::membership_internal {

void membership_state::end_failover(peer& p) {
  if (!s_.failover.stop || !owned_origins_.erase(p.node)) return;
  log::info("failover ends: the origin delivers its own records again",
            {{"origin", std::to_string(p.node)}, {"node", std::to_string(s_.node)}});
  std::vector<std::uint16_t> shards;
  for (auto it = owned_.begin(); it != owned_.end();) {
    if (it->first != p.node) {
      ++it;
      continue;
    }
    shards.push_back(it->second);
    handing_back_.insert(*it);
    it = owned_.erase(it);
  }
  hand_back(p.node, std::move(shards), s_.failover.stop(p.node, std::nullopt));
  ++decisions_[p.node];  // a release still on its way must not start a drain now
  if (s_.stats) s_.stats->set_failover(p.node, false);
}

/// For each peer not up for failover_after, and each shard of it that some
/// survivor holds: does this node deliver it? (See failover_owner.hpp.)
///
/// The failed nodes are known by the copies held, not only by peers heard
/// from: a survivor restarted while a peer is down never learnt its id.
/// Such a peer counts as not up since this node started.
void membership_state::decide_failover() {
  if (!s_.failover.start) return;
  // A copy trimmed to its end (offset at its maximum) holds nothing undelivered.
  auto holds = [](const replica_position& h) {
    return h.sequence > 0 && h.offset != std::numeric_limits<std::uint64_t>::max();
  };
  std::set<std::pair<std::uint16_t, std::uint16_t>> copies;  // (origin, shard)
  for (const auto& h : own_held_)
    if (holds(h)) copies.insert({h.origin, h.shard});
  for (const auto& p : peers_)
    for (const auto& h : p.held)
      if (holds(h)) copies.insert({h.origin, h.shard});
  std::set<std::pair<std::uint16_t, std::uint16_t>> failed;
  for (const auto& [origin, shard] : copies) {
    if (origin == s_.node || owned_.count({origin, shard}) || handing_back_.count({origin, shard})) continue;
    auto since = started_;
    bool up = false;
    for (const auto& p : peers_)
      if (p.node == origin) {
        up = p.announced_up;
        since = p.not_up_since;
      }
    if (up || now() - since < s_.failover_after) continue;
    // Alive but not joined (the two list each other differently): never failed over.
    if (const auto h = heard_alive_.find(origin);
        h != heard_alive_.end() && now() - h->second < s_.failover_after)
      continue;
    if (const auto* p = peer_delivering(origin, shard)) {
      // Taken already: left to it unless this node's copy reaches further
      // (then this node takes it, and the peer gives it up by the same rule).
      decide(origin, shard, contest_winner(*p, origin, shard));
      continue;
    }
    failed.insert({origin, shard});
    if (const auto owner = views_.observe(origin, shard, candidates(origin, shard))) decide(origin, shard, *owner);
  }
  views_.retain(failed);
}

/// A peer heard from that is not itself failed over.
bool membership_state::is_survivor(const peer& p) const {
  return p.node != 0 && (p.announced_up || now() - p.not_up_since < s_.failover_after);
}

/// This node and every candidate peer, with its copy of (origin, shard).
std::vector<failover_candidate> membership_state::candidates(std::uint16_t origin, std::uint16_t shard) const {
  std::vector<failover_candidate> out{{s_.node, find(own_held_, origin, shard)}};
  for (const auto& p : peers_)
    if (p.node != origin && is_candidate(p)) out.push_back({p.node, find(p.held, origin, shard)});
  return out;
}

/// A surviving peer that says it delivers (origin, shard), if any.
const peer* membership_state::peer_delivering(std::uint16_t origin, std::uint16_t shard) const {
  for (const auto& p : peers_) {
    if (p.node == origin || !is_survivor(p)) continue;
    for (const auto& d : p.delivering)
      if (d.origin == origin && d.shard == shard) return &p;
  }
  return nullptr;
}

/// Of this node and peer `p`, which says it delivers (origin, shard): the
/// one whose copy the rule names. `p` computes the same from the same ends.
std::uint16_t membership_state::contest_winner(const peer& p, std::uint16_t origin, std::uint16_t shard) const {
  return failover_owner({{s_.node, find(own_held_, origin, shard)}, {p.node, find(p.delivering, origin, shard)}});
}

/// Two survivors that both deliver a shard (views that never met: a
/// survivor that restarted, or a partition longer than failover_after):
/// the one the two copy ends name keeps it, the other stops its drain and
/// gives the copy back. Both compute it from the same two ends.
void membership_state::give_up_contested() {
  std::vector<std::pair<std::uint16_t, std::uint16_t>> lost;
  for (const auto& [origin, shard] : owned_) {
    const peer* p = peer_delivering(origin, shard);
    if (!p || contest_winner(*p, origin, shard) == s_.node) continue;
    log::warn("failover: another survivor delivers this replica too; this node stops",
              {{"origin", std::to_string(origin)}, {"shard", std::to_string(shard)},
               {"owner", std::to_string(p->node)}, {"node", std::to_string(s_.node)}});
    lost.push_back({origin, shard});
  }
  for (const auto& [origin, shard] : lost) {
    owned_.erase({origin, shard});
    handing_back_.insert({origin, shard});
    hand_back(origin, {shard}, s_.failover.stop(origin, shard));
    bool owns_more = false;
    for (const auto& o : owned_) owns_more = owns_more || o.first == origin;
    if (!owns_more) {
      owned_origins_.erase(origin);
      if (s_.stats) s_.stats->set_failover(origin, false);
    }
  }
}

void membership_state::decide(std::uint16_t origin, std::uint16_t shard, std::uint16_t owner) {
  if (owner != s_.node) {
    if (logged_.insert({origin, shard, owner}).second)
      log::info("failover: a peer delivers a failed node's replica",
                {{"origin", std::to_string(origin)}, {"shard", std::to_string(shard)},
                 {"owner", std::to_string(owner)}, {"node", std::to_string(s_.node)}});
    return;
  }
  const auto best = find(own_held_, origin, shard);
  owned_.insert({origin, shard});
  owned_origins_.insert(origin);
  log::warn("failover: this node delivers a failed node's replica",
            {{"origin", std::to_string(origin)}, {"shard", std::to_string(shard)},
             {"owner", std::to_string(s_.node)}, {"replica_segment", std::to_string(best.sequence)},
             {"replica_offset", std::to_string(best.offset)}});
  if (s_.stats) s_.stats->set_failover(origin, true);
  // The store stops writing the copy and repairs its tail; then the drain starts.
  const auto decision = decisions_[origin];
  self_->request(s_.store, caf::infinite, release_atom::value, origin, shard, true)
      .then([this, origin, shard, decision](done_atom) {
        if (decision == decisions_[origin] && owned_.count({origin, shard})) s_.failover.start(origin, shard);
      });
}

replica_position membership_state::find(const std::vector<replica_position>& held, std::uint16_t origin, std::uint16_t shard) {
  for (const auto& h : held)
    if (h.origin == origin && h.shard == shard) return h;
  return {origin, shard, 0, 0, 1, false};
}

}  // namespace weir::membership_internal
