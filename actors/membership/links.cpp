// membership: calling peers and answering their hellos: who a peer is comes from its
// link (settings.identity), never from its words.
#include "actors/membership/membership_state.hpp"

namespace weir::membership_internal {

void membership_state::init(pointer self, membership_settings s) {
  self_ = self;
  s_ = std::move(s);
  started_ = now();
  for (const auto& a : s_.peers) {
    peer p;
    p.address = a;
    if (const auto at = parse_address(a)) {  // validated with the configuration
      p.host = at->host;
      p.port = at->port;
    }
    p.calls = s_.listen < a;
    p.not_up_since = started_;
    peers_.push_back(std::move(p));
  }
  self_->set_down_handler([this](const caf::down_msg& d) {
    if (!on_drain_down(d.source)) on_down(d.source);
  });
  for (std::uint32_t i = 0; i < peers_.size(); ++i)
    if (peers_[i].calls) connect(i);
  self_->send(self_, tick_atom::value);
}

/// Whether the message being handled comes from the node of peer
/// `origin` (its replicators send from there): only a node may ship its
/// own records.
bool membership_state::sent_by(std::uint16_t origin) {
  const auto sender = self_->current_sender();
  if (!sender) return false;
  for (const auto& p : peers_)
    if (p.connected && p.node == origin && p.handle.node() == sender->node()) return true;
  return false;
}

/// A peer that connects here: its hello's sender is the handle to it,
/// once its link proved the node id the hello claims. The answer always
/// names this node and its protocol, so that a caller of another version
/// can say why it was not taken.
caf::result<std::uint16_t, std::uint16_t, bool> membership_state::on_hello(std::uint16_t from, const std::string& address,
                                                         std::uint16_t protocol) {
  const caf::result<std::uint16_t, std::uint16_t, bool> refused{s_.node, cluster_protocol_version, false};
  auto it = std::find_if(peers_.begin(), peers_.end(), [&](const peer& p) { return p.address == address; });
  if (from == s_.node) {
    if (refused_lines_.admit() > 0)
      log::error("a node with this node's own cluster.node_id said hello; ignored (two nodes share an id)",
                 {{"node", std::to_string(from)}, {"listen", address}});
    return refused;
  }
  if (protocol != cluster_protocol_version) {
    if (it != peers_.end()) log_protocol_mismatch(*it, protocol);
    return refused;
  }
  auto handle = caf::actor_cast<cluster_node_actor>(self_->current_sender());
  if (!handle) return refused;
  auto promise = self_->make_response_promise<std::uint16_t, std::uint16_t, bool>();
  const auto index = it == peers_.end() ? std::optional<std::size_t>{} : std::optional<std::size_t>(it - peers_.begin());
  self_->request(s_.identity, std::chrono::seconds(10), caf::get_atom::value, handle.node())
      .then(
          [this, promise, index, from, address, handle](const caf::node_id&, const std::string&,
                                                        std::uint16_t proven) mutable {
            bool taken = false;
            if (!index) {
              // A node its link proved, alive, but at an address this node
              // does not list: it is not failed over while it keeps calling.
              if (proven == from) heard_alive_[from] = now();
              if (refused_lines_.admit() > 0)
                log::warn("a node not in cluster.peers said hello; not taken (its cluster.listen is not in this "
                          "node's cluster.peers)",
                          {{"node", std::to_string(from)}, {"listen", address}});
            } else {
              taken = take_caller(*index, from, proven, std::move(handle));
            }
            promise.deliver(s_.node, cluster_protocol_version, taken);
          },
          [this, promise, from](caf::error& e) mutable {
            if (refused_lines_.admit() > 0)
              log::error("cannot tell which node a hello came from; not taken",
                         {{"node", std::to_string(from)}, {"error", caf::to_string(e)}});
            promise.deliver(s_.node, cluster_protocol_version, false);
          });
  return promise;
}

/// A hello claiming `from` from `handle`, whose link proved `proven`:
/// whether it is taken as the member at peers_[index].
bool membership_state::take_caller(std::size_t index, std::uint16_t from, std::uint16_t proven, cluster_node_actor handle) {
  auto& p = peers_[index];
  if (proven != from) {
    if (refused_lines_.admit() > 0)
      log::error("a cluster peer said hello as another node than its certificate names; not taken",
               {{"claimed", std::to_string(from)}, {"certificate", proven == 0 ? "none" : node_certificate(proven)},
                {"listen", p.address}});
    return false;
  }
  heard_alive_[from] = now();
  if (p.node != 0 && p.node != from) {
    if (refused_lines_.admit() > 0)
      log::error("a cluster peer said hello from another node's cluster.listen; not taken",
               {{"node", std::to_string(from)}, {"listen", p.address}, {"that_listen_is_node", std::to_string(p.node)}});
    return false;
  }
  for (const auto& other : peers_)
    if (&other != &p && other.connected && other.node == from) {
      log::error("two cluster peers claim the same cluster.node_id; the second is not taken",
                 {{"node", std::to_string(from)}, {"first", other.address}, {"second", p.address}});
      return false;
    }
  if (p.connected && p.handle != handle) {
    // The peer restarted before its old connection was seen to end: the
    // replicators must let go of the old handle before they take the new.
    self_->demonitor(p.handle.address());
    p.connected = false;
    refresh(p);
  }
  p.handle = std::move(handle);
  self_->monitor(p.handle);
  learn(p, from);
  p.connected = true;
  p.mismatch_logged.reset();
  p.last_heard = now();
  log::info("cluster peer connected", {{"peer", p.address}, {"node", std::to_string(from)}});
  refresh(p);
  return true;
}

/// Whether the message being handled comes from a peer taken as a member.
bool membership_state::from_member() {
  const auto sender = self_->current_sender();
  if (!sender) return false;
  for (const auto& p : peers_)
    if (p.connected && p.handle.node() == sender->node()) return true;
  return false;
}

/// A message outside the interface: logged at most once a minute.
void membership_state::on_unknown(const caf::type_erased_tuple& content) {
  const auto at = now();
  if (unknown_logged_ && at - *unknown_logged_ < std::chrono::minutes(1)) return;
  unknown_logged_ = at;
  std::string what = content.stringify();
  if (what.size() > 160) what = what.substr(0, 160) + "...";
  log::error("the cluster actor got a message it does not understand; a peer may run another weir version",
             {{"message", what}, {"this_protocol", std::to_string(cluster_protocol_version)}});
}

void membership_state::on_connect_to(std::uint32_t i) {
  if (i < peers_.size() && !peers_[i].connected) connect(i);
}

void membership_state::connect(std::uint32_t i) {
  auto& p = peers_[i];
  if (p.connecting) return;
  p.connecting = true;
  const auto attempt = ++p.attempt;
  self_->request(s_.middleman, std::chrono::seconds(10), caf::connect_atom::value, p.host, p.port)
      .then(
          [this, i, attempt](caf::node_id&, caf::strong_actor_ptr& ptr, std::set<std::string>&) {
            auto& p = peers_[i];
            if (p.attempt != attempt) return;
            p.connecting = false;
            if (!ptr) return retry(i, "no actor published there");
            p.handle = caf::actor_cast<cluster_node_actor>(std::move(ptr));
            self_->monitor(p.handle);
            self_->request(p.handle, std::chrono::seconds(10), hello_atom::value, s_.node, s_.listen,
                           cluster_protocol_version)
                .then([this, i, attempt](std::uint16_t node, std::uint16_t protocol, bool taken) {
                        // An answer is the called node's, not one forged by another
                        // link (which used up the request: the peer is called again).
                        const auto sender = self_->current_sender();
                        if (!peers_[i].handle || peers_[i].attempt != attempt) return;
                        if (!sender || sender->node() != peers_[i].handle.node())
                          return retry(i, "an answer to the hello came from another node");
                        on_answered(i, attempt, node, protocol, taken);
                      },
                      [this, i, attempt](caf::error& e) {
                        if (peers_[i].attempt != attempt) return;  // its link ended: called again already
                        // A hello the peer does not understand (weir before
                        // versioned hellos, or another shape of it) cannot match.
                        if (e == caf::sec::unexpected_message) return refuse_version(i, 0);
                        retry(i, caf::to_string(e));
                      });
          },
          [this, i, attempt](caf::error& e) {
            if (peers_[i].attempt != attempt) return;
            peers_[i].connecting = false;
            retry(i, caf::to_string(e));
          });
}

void membership_state::on_answered(std::uint32_t i, std::uint64_t attempt, std::uint16_t node, std::uint16_t protocol,
                                   bool taken) {
  auto& p = peers_[i];
  if (protocol != cluster_protocol_version) return refuse_version(i, protocol);
  if (node == s_.node) {
    log::error("cluster peer has this node's own cluster.node_id; not joined",
               {{"peer", p.address}, {"node", std::to_string(node)}});
    return retry(i, "same node id");
  }
  self_->request(s_.identity, std::chrono::seconds(10), caf::get_atom::value, p.handle.node())
      .then(
          [this, i, attempt, node, taken](const caf::node_id&, const std::string&, std::uint16_t proven) {
            if (peers_[i].attempt == attempt) take_called(i, node, proven, taken);
          },
          [this, i, attempt](caf::error& e) {
            if (peers_[i].attempt == attempt) retry(i, "cannot tell which node answered: " + caf::to_string(e));
          });
}

/// The peer called at index `i` answered as `node` (and whether it took
/// this node); its link proved `proven`.
void membership_state::take_called(std::uint32_t i, std::uint16_t node, std::uint16_t proven, bool taken) {
  auto& p = peers_[i];
  if (!p.handle) return;  // lost meanwhile
  if (proven == node && !taken) {
    // Alive, but it does not list this node (cluster.listen / cluster.peers
    // differ between the two): not a member, and not failed over either.
    heard_alive_[node] = now();
    if (!p.not_taken_logged)
      log::error("a cluster peer did not take this node as a member; its cluster.peers must list this node's "
                 "cluster.listen",
                 {{"peer", p.address}, {"node", std::to_string(node)}, {"this_listen", s_.listen}});
    p.not_taken_logged = true;
    return call_again_later(i);
  }
  if (proven != node || (p.node != 0 && p.node != node)) {
    // Said once while it lasts, and asked again at the longest interval.
    if (!p.wrong_node_logged)
      log::error("the node at a cluster peer's address is not the one expected; not joined",
                 {{"peer", p.address}, {"answered_as", std::to_string(node)},
                  {"certificate", proven == 0 ? "none" : node_certificate(proven)},
                  {"expected", p.node == 0 ? "any" : std::to_string(p.node)}});
    p.wrong_node_logged = true;
    return call_again_later(i);
  }
  for (const auto& other : peers_)
    if (&other != &p && other.connected && other.node == node) {
      log::error("two cluster peers claim the same cluster.node_id; the second is not taken",
                 {{"node", std::to_string(node)}, {"first", other.address}, {"second", p.address}});
      self_->demonitor(p.handle.address());
      p.handle = nullptr;
      return retry(i, "duplicate node id");
    }
  learn(p, node);
  p.connected = true;
  p.mismatch_logged.reset();
  p.wrong_node_logged = false;
  p.not_taken_logged = false;
  p.backoff = std::chrono::milliseconds(100);
  p.last_heard = now();
  log::info("cluster peer connected", {{"peer", p.address}, {"node", std::to_string(node)}});
  refresh(p);
}

/// The peer this node calls speaks another cluster protocol: said once,
/// and asked again at the longest interval (it may be upgraded meanwhile).
void membership_state::refuse_version(std::uint32_t i, std::uint16_t protocol) {
  auto& p = peers_[i];
  log_protocol_mismatch(p, protocol);
  // A later failure to reach it is still logged once, as for any peer.
  call_again_later(i);
}

void membership_state::log_protocol_mismatch(peer& p, std::uint16_t protocol) {
  if (p.mismatch_logged == protocol) return;
  p.mismatch_logged = protocol;
  log::error("a cluster peer speaks another cluster protocol version; not joined until both run the same weir",
             {{"peer", p.address},
              {"peer_protocol", protocol == 0 ? std::string("none (its hello has no version)") : std::to_string(protocol)},
              {"this_protocol", std::to_string(cluster_protocol_version)}});
}

void membership_state::retry(std::uint32_t i, const std::string& why) {
  auto& p = peers_[i];
  if (p.backoff == std::chrono::milliseconds(100))
    log::warn("cannot reach a cluster peer; retrying", {{"peer", p.address}, {"error", why}});
  self_->delayed_send(self_, p.backoff, connect_to_atom::value, i);
  p.backoff = std::min(p.backoff * 2, s_.reconnect_max);
}

void membership_state::on_down(const caf::actor_addr& who) {
  for (std::uint32_t i = 0; i < peers_.size(); ++i) {
    auto& p = peers_[i];
    if (!p.connected && p.handle && p.handle.address() == who) {
      // The link of a call still under way (its hello, or the check of who
      // answered) ended: that call is over, or the peer would count as
      // connected over a link that is gone, and never be called again.
      p.handle = nullptr;
      ++p.attempt;
      p.connecting = false;
      if (p.calls) retry(i, "connection lost during the hello");
      continue;
    }
    if (!p.connected || p.handle.address() != who) continue;
    p.connected = false;
    p.handle = nullptr;
    p.incarnation = 0;
    log::warn("cluster peer lost", {{"peer", p.address}, {"node", std::to_string(p.node)}});
    refresh(p);
    if (p.calls) retry(i, "connection lost");  // else it calls again when it can
  }
}

/// The peer called at `i` answered but is not joined: its handle goes, and
/// it is called again at the longest interval (it may be fixed meanwhile).
void membership_state::call_again_later(std::uint32_t i) {
  auto& p = peers_[i];
  if (p.handle) self_->demonitor(p.handle.address());
  p.handle = nullptr;
  p.backoff = std::chrono::milliseconds(100);
  self_->delayed_send(self_, s_.reconnect_max, connect_to_atom::value, i);
}

}  // namespace weir::membership_internal

namespace weir::membership_internal {

/// The peer at `p` is node `node`, newly connected: its life is learnt again
/// from its heartbeats (a restarted node may be a new one), and the gate
/// hears of a node it did not know.
void membership_state::learn(peer& p, std::uint16_t node) {
  p.incarnation = 0;
  if (p.node == node) return;
  p.node = node;
  if (!s_.members) return;
  std::set<std::uint16_t> known;
  for (const auto& q : peers_)
    if (q.node != 0) known.insert(q.node);
  s_.members(std::move(known));
}

}  // namespace weir::membership_internal
