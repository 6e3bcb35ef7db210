#include "actors/membership.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <list>
#include <set>

#include <caf/actor_system.hpp>
#include <caf/atom.hpp>
#include <caf/node_id.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/failover_owner.hpp"
#include "actors/failure_log.hpp"
#include "config/value_parsing.hpp"
#include "observability/cluster_metrics.hpp"
#include "observability/log.hpp"
#include "observability/log_throttle.hpp"

namespace weir {

namespace {

using clock = std::chrono::steady_clock;

struct peer {
  std::string address;
  std::string host;
  std::uint16_t port = 0;
  std::uint16_t node = 0;  // learned from its hello or its answer to ours
  bool calls = false;      // this node connects to it (else it connects here)
  cluster_node_actor handle;
  bool connecting = false;
  bool connected = false;
  bool announced_up = false;  // the replicators were told it is up
  clock::time_point last_heard{};
  clock::time_point not_up_since = clock::now();
  clock::time_point up_since{};
  std::chrono::milliseconds backoff{100};
  std::vector<replica_position> held;  // its copies' ends, from its last heartbeat
  bool held_known = false;             // its store answered for them
  std::vector<replica_position> delivering;  // the copies it delivers as failover owner
  std::uint64_t incarnation = 0;             // its life, from its heartbeats
  // The other protocol it was last refused for (0: an unversioned hello),
  // while it stays refused: each refusal is logged once.
  std::optional<std::uint16_t> mismatch_logged;
  bool wrong_node_logged = false;  // its link proved another node than it answered as
  bool not_taken_logged = false;   // it answered, but does not list this node
};

class membership_state {
 public:
  static inline const char* name = "membership";
  using pointer = membership_actor::stateful_pointer<membership_state>;

  void init(pointer self, membership_settings s) {
    self_ = self;
    s_ = std::move(s);
    for (const auto& a : s_.peers) {
      peer p;
      p.address = a;
      if (const auto at = parse_address(a)) {  // validated with the configuration
        p.host = at->host;
        p.port = at->port;
      }
      p.calls = s_.listen < a;
      peers_.push_back(std::move(p));
    }
    self_->set_down_handler([this](const caf::down_msg& d) {
      if (!on_drain_down(d.source)) on_down(d.source);
    });
    for (std::uint32_t i = 0; i < peers_.size(); ++i)
      if (peers_[i].calls) connect(i);
    self_->send(self_, tick_atom::value);
  }

  const replica_store_actor& store() const { return s_.store; }

  /// Whether the message being handled comes from the node of peer
  /// `origin` (its replicators send from there): only a node may ship its
  /// own records.
  bool sent_by(std::uint16_t origin) {
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
  caf::result<std::uint16_t, std::uint16_t, bool> on_hello(std::uint16_t from, const std::string& address,
                                                           std::uint16_t protocol) {
    const caf::result<std::uint16_t, std::uint16_t, bool> refused{s_.node, cluster_protocol_version, false};
    auto it = std::find_if(peers_.begin(), peers_.end(), [&](const peer& p) { return p.address == address; });
    if (from == s_.node) {
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
                if (proven == from) heard_alive_[from] = clock::now();
                log::warn("a node not in cluster.peers said hello; not taken (its cluster.listen is not in this "
                          "node's cluster.peers)",
                          {{"node", std::to_string(from)}, {"listen", address}});
              } else {
                taken = take_caller(*index, from, proven, std::move(handle));
              }
              promise.deliver(s_.node, cluster_protocol_version, taken);
            },
            [this, promise, from](caf::error& e) mutable {
              log::error("cannot tell which node a hello came from; not taken",
                         {{"node", std::to_string(from)}, {"error", caf::to_string(e)}});
              promise.deliver(s_.node, cluster_protocol_version, false);
            });
    return promise;
  }

  /// A hello claiming `from` from `handle`, whose link proved `proven`:
  /// whether it is taken as the member at peers_[index].
  bool take_caller(std::size_t index, std::uint16_t from, std::uint16_t proven, cluster_node_actor handle) {
    auto& p = peers_[index];
    if (proven != from) {
      if (refused_lines_.admit() > 0)
        log::error("a cluster peer said hello as another node than its certificate names; not taken",
                 {{"claimed", std::to_string(from)}, {"certificate", proven == 0 ? "none" : node_certificate(proven)},
                  {"listen", p.address}});
      return false;
    }
    heard_alive_[from] = clock::now();
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
    p.node = from;
    p.connected = true;
    p.mismatch_logged.reset();
    p.last_heard = clock::now();
    log::info("cluster peer connected", {{"peer", p.address}, {"node", std::to_string(from)}});
    refresh(p);
    return true;
  }

  static std::string node_certificate(std::uint16_t node) { return "weir-node-" + std::to_string(node); }

  /// Whether the message being handled comes from a peer taken as a member.
  bool from_member() {
    const auto sender = self_->current_sender();
    if (!sender) return false;
    for (const auto& p : peers_)
      if (p.connected && p.handle.node() == sender->node()) return true;
    return false;
  }

  void on_heartbeat(peer_heartbeat& h) {
    for (auto& p : peers_) {
      if (p.node != h.from) continue;
      if (!sent_by(h.from)) return;  // only a node speaks for itself
      p.last_heard = clock::now();
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

  /// A message outside the interface: logged at most once a minute.
  void on_unknown(const caf::type_erased_tuple& content) {
    const auto now = clock::now();
    if (unknown_logged_ && now - *unknown_logged_ < std::chrono::minutes(1)) return;
    unknown_logged_ = now;
    std::string what = content.stringify();
    if (what.size() > 160) what = what.substr(0, 160) + "...";
    log::error("the cluster actor got a message it does not understand; a peer may run another weir version",
               {{"message", what}, {"this_protocol", std::to_string(cluster_protocol_version)}});
  }

  void on_connect_to(std::uint32_t i) {
    if (i < peers_.size() && !peers_[i].connected) connect(i);
  }

  /// A heartbeat goes out on every tick, whatever the replica store is
  /// doing; failover is decided only on a tick that has the store's own
  /// copy ends (a busy store answers late, and only one question is out).
  void on_tick() {
    self_->delayed_send(self_, s_.heartbeat, tick_atom::value);
    if (asking_store_) {
      // A store that has not answered for failover_after makes this node no
      // candidate: it could not release a copy to deliver it either.
      if (clock::now() - answered_at_ >= s_.failover_after) held_known_ = false;
      return beat(false);
    }
    asking_store_ = true;
    self_->request(s_.store, std::chrono::seconds(60), held_atom::value)
        .then(
            [this](std::vector<replica_position>& held) {
              asking_store_ = false;
              own_held_ = std::move(held);
              held_known_ = true;
              answered_at_ = clock::now();
              beat(true);
            },
            [this](caf::error&) {
              asking_store_ = false;
              held_known_ = false;  // a store that fails cannot hand a copy to a drain
              beat(false);
            });
  }

 private:
  void beat(bool store_answered) {
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

  /// The store learns an origin's life; it retires copies of any other
  /// (asked again on every tick: a copy a failover drain had is retired
  /// once it is handed back).
  void tell_life(std::uint16_t origin, std::uint64_t incarnation) {
    self_->send(s_.store, retire_atom::value, origin, incarnation);
  }

  /// An origin's latest life is the one it says in its heartbeats; for one
  /// not heard, the one whose copy, among every node's, reaches furthest (a
  /// later life numbers its segments after an earlier one's). This node's
  /// copies of another life are retired, so that none is left behind when
  /// the latest is delivered.
  void retire_earlier_lives() {
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

  void connect(std::uint32_t i) {
    auto& p = peers_[i];
    if (p.connecting) return;
    p.connecting = true;
    self_->request(s_.middleman, std::chrono::seconds(10), caf::connect_atom::value, p.host, p.port)
        .then(
            [this, i](caf::node_id&, caf::strong_actor_ptr& ptr, std::set<std::string>&) {
              auto& p = peers_[i];
              p.connecting = false;
              if (!ptr) return retry(i, "no actor published there");
              p.handle = caf::actor_cast<cluster_node_actor>(std::move(ptr));
              self_->monitor(p.handle);
              self_->request(p.handle, std::chrono::seconds(10), hello_atom::value, s_.node, s_.listen,
                             cluster_protocol_version)
                  .then([this, i](std::uint16_t node, std::uint16_t protocol, bool taken) {
                          on_answered(i, node, protocol, taken);
                        },
                        [this, i](caf::error& e) {
                          // A hello the peer does not understand (weir before
                          // versioned hellos, or another shape of it) cannot match.
                          if (e == caf::sec::unexpected_message) return refuse_version(i, 0);
                          retry(i, caf::to_string(e));
                        });
            },
            [this, i](caf::error& e) {
              peers_[i].connecting = false;
              retry(i, caf::to_string(e));
            });
  }

  void on_answered(std::uint32_t i, std::uint16_t node, std::uint16_t protocol, bool taken) {
    auto& p = peers_[i];
    if (protocol != cluster_protocol_version) return refuse_version(i, protocol);
    if (node == s_.node) {
      log::error("cluster peer has this node's own cluster.node_id; not joined",
                 {{"peer", p.address}, {"node", std::to_string(node)}});
      return retry(i, "same node id");
    }
    self_->request(s_.identity, std::chrono::seconds(10), caf::get_atom::value, p.handle.node())
        .then(
            [this, i, node, taken](const caf::node_id&, const std::string&, std::uint16_t proven) {
              take_called(i, node, proven, taken);
            },
            [this, i](caf::error& e) { retry(i, "cannot tell which node answered: " + caf::to_string(e)); });
  }

  /// The peer called at index `i` answered as `node` (and whether it took
  /// this node); its link proved `proven`.
  void take_called(std::uint32_t i, std::uint16_t node, std::uint16_t proven, bool taken) {
    auto& p = peers_[i];
    if (!p.handle) return;  // lost meanwhile
    if (proven == node && !taken) {
      // Alive, but it does not list this node (cluster.listen / cluster.peers
      // differ between the two): not a member, and not failed over either.
      heard_alive_[node] = clock::now();
      if (!p.not_taken_logged)
        log::error("a cluster peer did not take this node as a member; its cluster.peers must list this node's "
                   "cluster.listen",
                   {{"peer", p.address}, {"node", std::to_string(node)}, {"this_listen", s_.listen}});
      p.not_taken_logged = true;
      self_->demonitor(p.handle.address());
      p.handle = nullptr;
      p.backoff = std::chrono::milliseconds(100);
      self_->delayed_send(self_, s_.reconnect_max, connect_to_atom::value, i);
      return;
    }
    if (proven != node || (p.node != 0 && p.node != node)) {
      // Said once while it lasts, and asked again at the longest interval.
      if (!p.wrong_node_logged)
        log::error("the node at a cluster peer's address is not the one expected; not joined",
                   {{"peer", p.address}, {"answered_as", std::to_string(node)},
                    {"certificate", proven == 0 ? "none" : node_certificate(proven)},
                    {"expected", p.node == 0 ? "any" : std::to_string(p.node)}});
      p.wrong_node_logged = true;
      self_->demonitor(p.handle.address());
      p.handle = nullptr;
      p.backoff = std::chrono::milliseconds(100);
      self_->delayed_send(self_, s_.reconnect_max, connect_to_atom::value, i);
      return;
    }
    for (const auto& other : peers_)
      if (&other != &p && other.connected && other.node == node) {
        log::error("two cluster peers claim the same cluster.node_id; the second is not taken",
                   {{"node", std::to_string(node)}, {"first", other.address}, {"second", p.address}});
        self_->demonitor(p.handle.address());
        p.handle = nullptr;
        return retry(i, "duplicate node id");
      }
    p.node = node;
    p.connected = true;
    p.mismatch_logged.reset();
    p.wrong_node_logged = false;
    p.not_taken_logged = false;
    p.backoff = std::chrono::milliseconds(100);
    p.last_heard = clock::now();
    log::info("cluster peer connected", {{"peer", p.address}, {"node", std::to_string(node)}});
    refresh(p);
  }

  /// The peer this node calls speaks another cluster protocol: said once,
  /// and asked again at the longest interval (it may be upgraded meanwhile).
  void refuse_version(std::uint32_t i, std::uint16_t protocol) {
    auto& p = peers_[i];
    log_protocol_mismatch(p, protocol);
    if (p.handle) self_->demonitor(p.handle.address());
    p.handle = nullptr;
    // Asked again at the longest interval; a later failure to reach it is
    // still logged once, as for any peer.
    p.backoff = std::chrono::milliseconds(100);
    self_->delayed_send(self_, s_.reconnect_max, connect_to_atom::value, i);
  }

  void log_protocol_mismatch(peer& p, std::uint16_t protocol) {
    if (p.mismatch_logged == protocol) return;
    p.mismatch_logged = protocol;
    log::error("a cluster peer speaks another cluster protocol version; not joined until both run the same weir",
               {{"peer", p.address},
                {"peer_protocol", protocol == 0 ? std::string("none (its hello has no version)") : std::to_string(protocol)},
                {"this_protocol", std::to_string(cluster_protocol_version)}});
  }

  void retry(std::uint32_t i, const std::string& why) {
    auto& p = peers_[i];
    if (p.backoff == std::chrono::milliseconds(100))
      log::warn("cannot reach a cluster peer; retrying", {{"peer", p.address}, {"error", why}});
    self_->delayed_send(self_, p.backoff, connect_to_atom::value, i);
    p.backoff = std::min(p.backoff * 2, s_.reconnect_max);
  }

  void on_down(const caf::actor_addr& who) {
    for (std::uint32_t i = 0; i < peers_.size(); ++i) {
      auto& p = peers_[i];
      if (!p.connected || p.handle.address() != who) continue;
      p.connected = false;
      p.handle = nullptr;
      log::warn("cluster peer lost", {{"peer", p.address}, {"node", std::to_string(p.node)}});
      refresh(p);
      if (p.calls) retry(i, "connection lost");  // else it calls again when it can
    }
  }

  peer_state_label state_of(const peer& p) const {
    if (!p.connected) return peer_state_label::down;
    return clock::now() - p.last_heard > 3 * s_.heartbeat ? peer_state_label::suspect : peer_state_label::up;
  }

  /// Tells the replicators when a peer's up-ness changed; keeps the metrics.
  void refresh(peer& p) {
    const auto state = state_of(p);
    const bool up = state == peer_state_label::up;
    if (up != p.announced_up) {
      p.announced_up = up;
      (up ? p.up_since : p.not_up_since) = clock::now();
      if (!up) log::warn("cluster peer not up", {{"peer", p.address}, {"node", std::to_string(p.node)},
                                                 {"state", name_of(state)}});
      for (const auto& r : s_.replicators) self_->send(r, peer_update{p.node, up, up ? p.handle : cluster_node_actor{}});
    }
    // A failover ends once its origin has stayed up a while: a node that
    // crashes soon after each start does not end it (and have it taken again
    // failover_after later) at every start.
    if (up && clock::now() - p.up_since >= settle()) end_failover(p);
    if (s_.stats) {
      const double heard =
          p.last_heard == clock::time_point{} ? -1 : std::chrono::duration<double>(clock::now() - p.last_heard).count();
      s_.stats->set_peer(p.address, p.node, state, heard);
    }
  }

  std::chrono::milliseconds settle() const { return std::max(3 * s_.heartbeat, s_.failover_after / 2); }

  void end_failover(peer& p) {
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
  void decide_failover() {
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
      if (up || clock::now() - since < s_.failover_after) continue;
      // Alive but not joined (the two list each other differently): never failed over.
      if (const auto h = heard_alive_.find(origin);
          h != heard_alive_.end() && clock::now() - h->second < s_.failover_after)
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
  bool is_survivor(const peer& p) const {
    return p.node != 0 && (p.announced_up || clock::now() - p.not_up_since < s_.failover_after);
  }
  /// A survivor whose store has answered for its copies.
  bool is_candidate(const peer& p) const { return is_survivor(p) && p.held_known; }

  /// This node and every candidate peer, with its copy of (origin, shard).
  std::vector<failover_candidate> candidates(std::uint16_t origin, std::uint16_t shard) const {
    std::vector<failover_candidate> out{{s_.node, find(own_held_, origin, shard)}};
    for (const auto& p : peers_)
      if (p.node != origin && is_candidate(p)) out.push_back({p.node, find(p.held, origin, shard)});
    return out;
  }

  /// A surviving peer that says it delivers (origin, shard), if any.
  const peer* peer_delivering(std::uint16_t origin, std::uint16_t shard) const {
    for (const auto& p : peers_) {
      if (p.node == origin || !is_survivor(p)) continue;
      for (const auto& d : p.delivering)
        if (d.origin == origin && d.shard == shard) return &p;
    }
    return nullptr;
  }

  /// Of this node and peer `p`, which says it delivers (origin, shard): the
  /// one whose copy the rule names. `p` computes the same from the same ends.
  std::uint16_t contest_winner(const peer& p, std::uint16_t origin, std::uint16_t shard) const {
    return failover_owner({{s_.node, find(own_held_, origin, shard)}, {p.node, find(p.delivering, origin, shard)}});
  }

  /// Two survivors that both deliver a shard (views that never met: a
  /// survivor that restarted, or a partition longer than failover_after):
  /// the one the two copy ends name keeps it, the other stops its drain and
  /// gives the copy back. Both compute it from the same two ends.
  void give_up_contested() {
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

  void decide(std::uint16_t origin, std::uint16_t shard, std::uint16_t owner) {
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

  /// Shuts `drains` down, then gives the replica store back `origin`'s
  /// `shards` (which rewinds their cursors): in that order, so no drain
  /// stores a cursor after the rewind. A drain has ended when its down
  /// message comes (a reply could come from one still running); one that
  /// has not ended within 30 s is killed, and still waited for.
  void hand_back(std::uint16_t origin, std::vector<std::uint16_t> shards, std::vector<drain_actor> drains) {
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
  bool on_drain_down(const caf::actor_addr& who) {
    bool ours = false;
    for (auto& h : handbacks_) ours = h.drains.erase(who) > 0 || ours;
    finish_handbacks();
    return ours;
  }

  void finish_handbacks() {
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

 public:
  void kill_drain(const caf::actor& d) {
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
  ~membership_state() {
    for (auto& h : handbacks_) h.drains.clear();
    finish_handbacks();
  }

 private:
  static replica_position find(const std::vector<replica_position>& held, std::uint16_t origin, std::uint16_t shard) {
    for (const auto& h : held)
      if (h.origin == origin && h.shard == shard) return h;
    return {origin, shard, 0, 0, 1, false};
  }

  pointer self_ = nullptr;
  membership_settings s_;
  std::vector<peer> peers_;
  std::vector<replica_position> own_held_;
  std::set<std::pair<std::uint16_t, std::uint16_t>> owned_;  // (origin, shard) this node delivers
  std::set<std::uint16_t> owned_origins_;
  std::set<std::pair<std::uint16_t, std::uint16_t>> handing_back_;  // drains stopping, copy not yet given back
  struct handback {
    std::uint16_t origin = 0;
    std::vector<std::uint16_t> shards;
    std::set<caf::actor_addr> drains;  // not ended yet
  };
  std::list<handback> handbacks_;
  std::map<std::uint16_t, std::uint64_t> decisions_;  // per origin, bumped when its failover ends
  failover_views views_;
  bool asking_store_ = false;  // a question for the copy ends is out
  clock::time_point answered_at_{};  // the store's last answer
  bool held_known_ = false;  // own_held_ is the store's answer (and a recent one)
  clock::time_point started_ = clock::now();
  std::set<std::tuple<std::uint16_t, std::uint16_t, std::uint16_t>> logged_;
  std::optional<clock::time_point> unknown_logged_;
  log_throttle refused_lines_;  // hellos not taken for who their link proved
  std::map<std::uint16_t, clock::time_point> heard_alive_;  // nodes whose link proved them alive, when
};

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
