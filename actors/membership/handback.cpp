// membership: giving a failover copy back to the replica store, only once the drains
// that delivered it have ended.
#include "actors/membership/membership_state.hpp"

namespace weir::membership_internal {

/// Shuts `drains` down, then gives the replica store back `origin`'s
/// `shards` (which rewinds their cursors): in that order, so no drain
/// stores a cursor after the rewind. A drain has ended when its down
/// message comes (a reply could come from one still running); one that
/// has not ended within 30 s is killed, and still waited for.
void membership_state::hand_back(std::uint16_t origin, std::vector<std::uint16_t> shards, std::vector<drain_actor> drains) {
  handbacks_.push_back({origin, std::move(shards), {}});
  auto& h = handbacks_.back();
  for (const auto& d : drains) {
    h.drains.insert(d.address());
    self_->monitor(d);
    self_->request(d, caf::infinite, shutdown_atom::value).then([](done_atom) {}, [](caf::error&) {});
    self_->delayed_send(self_, std::chrono::seconds(30), kill_drain_atom::value, caf::actor_cast<caf::actor>(d));
  }
  finish_handbacks();
}

/// A failover drain has ended: the hand-backs it was the last of go on.
bool membership_state::on_drain_down(const caf::actor_addr& who) {
  bool ours = false;
  for (auto& h : handbacks_) ours = h.drains.erase(who) > 0 || ours;
  finish_handbacks();
  return ours;
}

void membership_state::finish_handbacks() {
  for (auto it = handbacks_.begin(); it != handbacks_.end();) {
    if (!it->drains.empty()) {
      ++it;
      continue;
    }
    for (auto shard : it->shards) {
      caf::anon_send(s_.store, release_atom::value, it->origin, shard, false);
      handing_back_.erase({it->origin, shard});
    }
    it = handbacks_.erase(it);
  }
}

void membership_state::kill_drain(const caf::actor& d) {
  for (const auto& h : handbacks_)
    if (h.drains.count(d.address())) {
      log::error("a failover drain did not stop within 30 s of the origin's return; stopping it",
                 {{"origin", std::to_string(h.origin)}});
      self_->send_exit(d, caf::exit_reason::kill);
    }
}

/// Stopping with hand-backs under way: the store still gets those copies
/// back (their release would be lost with this actor). A drain told to
/// stop may yet store its cursor after the rewind; the store keeps a
/// copy's cursor from passing a segment it holds (see replica_store).
membership_state::~membership_state() {
  for (auto& h : handbacks_) h.drains.clear();
  finish_handbacks();
}

}  // namespace weir::membership_internal
