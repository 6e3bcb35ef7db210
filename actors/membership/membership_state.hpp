#pragma once
// The membership actor's state (actors/membership.hpp), one object, its
// work in one file per job under actors/membership/:
//   links.cpp              calling peers and answering their hellos; who a peer is
//   failure_detection.cpp  heartbeats, and each peer up, suspect or down
//   failover.cpp           who delivers a failed node's replica, and when that ends
//   lives.cpp              which life of each origin the replica store keeps
//   handback.cpp           giving a failover copy back once its drains have ended
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

namespace membership_internal {

using clock = std::chrono::steady_clock;

struct peer {
  std::string address;
  std::string host;
  std::uint16_t port = 0;
  std::uint16_t node = 0;  // learned from its hello or its answer to ours
  bool calls = false;      // this node connects to it (else it connects here)
  cluster_node_actor handle;
  bool connecting = false;
  // Bumped by every call this node makes to it, and when the link of one
  // still under way ends: an answer to an earlier call is stale.
  std::uint64_t attempt = 0;
  bool connected = false;
  bool announced_up = false;  // the replicators were told it is up
  clock::time_point last_heard{};
  clock::time_point not_up_since{};  // set when the peer is listed
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

  void init(pointer self, membership_settings s);

  const replica_store_actor& store() const { return s_.store; }

  /// The actor clock's time: the steady clock in the daemon, the test
  /// coordinator's in the cluster simulation (whose runs replay from a seed).
  clock::time_point now() const { return self_->clock().now(); }

  /// Whether the message being handled comes from the node of peer
  /// `origin` (its replicators send from there): only a node may ship its
  /// own records.
  bool sent_by(std::uint16_t origin);

  /// A peer that connects here: its hello's sender is the handle to it,
  /// once its link proved the node id the hello claims. The answer always
  /// names this node and its protocol, so that a caller of another version
  /// can say why it was not taken.
  caf::result<std::uint16_t, std::uint16_t, bool> on_hello(std::uint16_t from, const std::string& address,
                                                           std::uint16_t protocol);

  /// A hello claiming `from` from `handle`, whose link proved `proven`:
  /// whether it is taken as the member at peers_[index].
  bool take_caller(std::size_t index, std::uint16_t from, std::uint16_t proven, cluster_node_actor handle);

  static std::string node_certificate(std::uint16_t node) { return "weir-node-" + std::to_string(node); }

  /// Whether the message being handled comes from a peer taken as a member.
  bool from_member();

  void on_heartbeat(peer_heartbeat& h);

  /// A message outside the interface: logged at most once a minute.
  void on_unknown(const caf::type_erased_tuple& content);

  void on_connect_to(std::uint32_t i);

  /// A heartbeat goes out on every tick, whatever the replica store is
  /// doing; failover is decided only on a tick that has the store's own
  /// copy ends (a busy store answers late, and only one question is out).
  void on_tick();

 private:
  void beat(bool store_answered);

  /// The store learns an origin's life; it retires copies of any other
  /// (asked again on every tick: a copy a failover drain had is retired
  /// once it is handed back).
  void tell_life(std::uint16_t origin, std::uint64_t incarnation);

  /// An origin's latest life is the one it says in its heartbeats; for one
  /// not heard, the one whose copy, among every node's, reaches furthest (a
  /// later life numbers its segments after an earlier one's). This node's
  /// copies of another life are retired, so that none is left behind when
  /// the latest is delivered.
  void retire_earlier_lives();

  void connect(std::uint32_t i);
  void learn(peer& p, std::uint16_t node);
  void call_again_later(std::uint32_t i);

  void on_answered(std::uint32_t i, std::uint64_t attempt, std::uint16_t node, std::uint16_t protocol, bool taken);

  /// The peer called at index `i` answered as `node` (and whether it took
  /// this node); its link proved `proven`.
  void take_called(std::uint32_t i, std::uint16_t node, std::uint16_t proven, bool taken);

  /// The peer this node calls speaks another cluster protocol: said once,
  /// and asked again at the longest interval (it may be upgraded meanwhile).
  void refuse_version(std::uint32_t i, std::uint16_t protocol);

  void log_protocol_mismatch(peer& p, std::uint16_t protocol);

  void retry(std::uint32_t i, const std::string& why);

  void on_down(const caf::actor_addr& who);

  peer_state_label state_of(const peer& p) const;

  /// Tells the replicators when a peer's up-ness changed; keeps the metrics.
  void refresh(peer& p);

  std::chrono::milliseconds settle() const { return std::max(3 * s_.heartbeat, s_.failover_after / 2); }

  void end_failover(peer& p);

  /// For each peer not up for failover_after, and each shard of it that some
  /// survivor holds: does this node deliver it? (See failover_owner.hpp.)
  ///
  /// The failed nodes are known by the copies held, not only by peers heard
  /// from: a survivor restarted while a peer is down never learnt its id.
  /// Such a peer counts as not up since this node started.
  void decide_failover();

  /// A peer heard from that is not itself failed over.
  bool is_survivor(const peer& p) const;
  /// A survivor whose store has answered for its copies.
  bool is_candidate(const peer& p) const { return is_survivor(p) && p.held_known; }

  /// This node and every candidate peer, with its copy of (origin, shard).
  std::vector<failover_candidate> candidates(std::uint16_t origin, std::uint16_t shard) const;

  /// A surviving peer that says it delivers (origin, shard), if any.
  const peer* peer_delivering(std::uint16_t origin, std::uint16_t shard) const;

  /// Of this node and peer `p`, which says it delivers (origin, shard): the
  /// one whose copy the rule names. `p` computes the same from the same ends.
  std::uint16_t contest_winner(const peer& p, std::uint16_t origin, std::uint16_t shard) const;

  /// Two survivors that both deliver a shard (views that never met: a
  /// survivor that restarted, or a partition longer than failover_after):
  /// the one the two copy ends name keeps it, the other stops its drain and
  /// gives the copy back. Both compute it from the same two ends.
  void give_up_contested();

  void decide(std::uint16_t origin, std::uint16_t shard, std::uint16_t owner);

  /// Shuts `drains` down, then gives the replica store back `origin`'s
  /// `shards` (which rewinds their cursors): in that order, so no drain
  /// stores a cursor after the rewind. A drain has ended when its down
  /// message comes (a reply could come from one still running); one that
  /// has not ended within 30 s is killed, and still waited for.
  void hand_back(std::uint16_t origin, std::vector<std::uint16_t> shards, std::vector<drain_actor> drains);

  /// A failover drain has ended: the hand-backs it was the last of go on.
  bool on_drain_down(const caf::actor_addr& who);

  void finish_handbacks();

 public:
  void kill_drain(const caf::actor& d);

  /// Stopping with hand-backs under way: the store still gets those copies
  /// back (their release would be lost with this actor). A drain told to
  /// stop may yet store its cursor after the rewind; the store keeps a
  /// copy's cursor from passing a segment it holds (see replica_store).
  ~membership_state();

 private:
  static replica_position find(const std::vector<replica_position>& held, std::uint16_t origin, std::uint16_t shard);

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
  clock::time_point started_{};
  std::set<std::tuple<std::uint16_t, std::uint16_t, std::uint16_t>> logged_;
  std::optional<clock::time_point> unknown_logged_;
  log_throttle refused_lines_;  // hellos not taken for who their link proved
  std::map<std::uint16_t, clock::time_point> heard_alive_;  // nodes whose link proved them alive, when
};


}  // namespace membership_internal
}  // namespace weir
