#pragma once
// The network between the simulated cluster's nodes, all in one actor system.
// A node's actors reach another node's only through remote proxies (as CAF's
// middleman gives them): a proxy carries the node id of the node it stands
// for, so `current_sender()->node()` tells nodes apart as it does between
// processes. What a proxy is sent becomes a packet, handed to the network
// actor, which files it on its link; the simulation decides when packets
// arrive (each link in order, as over TCP), and whether the network
// delays, duplicates or loses them. A lost packet is a lost link, as a lost
// TCP segment is: every packet still on it is gone, the proxies on both
// sides end (their monitors get down messages) and the caller dials again.
// A partition cuts every link across it and refuses dials across it until
// it heals; a crashed node's links end and its dials fail.
//
// Single-threaded: everything runs on the test scheduler, in the caller's thread.
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <set>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/actor_control_block.hpp>
#include <caf/fwd.hpp>
#include <caf/message.hpp>
#include <caf/message_id.hpp>
#include <caf/node_id.hpp>

#include "sim/sim_rng.hpp"

namespace weir::sim {

/// One message in flight from an actor on `from` to one on `to`.
struct packet {
  std::uint16_t from = 0, to = 0;
  std::uint64_t link = 0;  // the connection it was sent on: a later one never carries it
  caf::strong_actor_ptr sender;   // an actor of `sender_node` (or none)
  std::uint16_t sender_node = 0;  // `from`, unless `from` forwards a third node's message
  caf::strong_actor_ptr receiver; // an actor of `to`
  caf::message_id mid;
  caf::message content;
};

struct network_counters {
  std::uint64_t dropped = 0, sent = 0, delivered = 0, duplicated = 0, lost = 0, cuts = 0, dials = 0, dials_refused = 0;
};

class sim_network {
 public:
  explicit sim_network(caf::actor_system& sys);
  ~sim_network();
  sim_network(const sim_network&) = delete;
  sim_network& operator=(const sim_network&) = delete;

  /// The actor that takes every packet the proxies are sent.
  const caf::actor& actor() const { return actor_; }

  /// The CAF node id that stands for simulated node `node`, and back (0: none).
  static caf::node_id node_id_of(std::uint16_t node);
  std::uint16_t node_of(const caf::node_id& id) const;

  /// Node `node` is up and publishes `published` at `listen`, or is down.
  void publish(std::uint16_t node, const std::string& listen, caf::actor published);
  void crash(std::uint16_t node);
  bool up(std::uint16_t node) const { return published_.count(node) > 0; }

  /// A dial from `from` to `listen`: the proxy for that node's published
  /// actor, or null when it cannot be reached (down, partitioned, unknown).
  caf::strong_actor_ptr dial(std::uint16_t from, const std::string& listen);

  /// The nodes are split into `groups` (a node in none is with nobody):
  /// links across groups are cut and dials across refused. heal() undoes it.
  void partition(const std::vector<std::set<std::uint16_t>>& groups);
  void heal();
  bool reachable(std::uint16_t a, std::uint16_t b) const;

  /// Files a packet a proxy was sent (called by the network actor).
  void accept(packet p);
  /// Delivers the first packet of a link the seed picks; with
  /// `duplicate_percent` it stays queued to arrive once more, with
  /// `loss_percent` it is lost and its link cut. False when nothing is in flight.
  bool deliver_one(sim_rng& rng, unsigned duplicate_percent, unsigned loss_percent);
  std::size_t in_flight() const;

  /// The link between `a` and `b` ends (as when its TCP connection breaks).
  void cut(std::uint16_t a, std::uint16_t b, const std::string& why);

  const network_counters& counters() const { return counters_; }
  /// Told of cuts, crashes and partitions (a traced run prints them).
  std::function<void(const std::string&)> on_event;

  /// The proxy through which node `viewer` reaches `target` on `owner`.
  caf::strong_actor_ptr proxy(std::uint16_t viewer, std::uint16_t owner, const caf::strong_actor_ptr& target);

 private:
  using link_key = std::pair<std::uint16_t, std::uint16_t>;  // (lower, higher)
  static link_key key(std::uint16_t a, std::uint16_t b) { return a < b ? link_key{a, b} : link_key{b, a}; }
  struct proxy_key {
    std::uint16_t viewer = 0, owner = 0;
    caf::actor_id id = 0;
    bool operator<(const proxy_key& o) const {
      return std::tie(viewer, owner, id) < std::tie(o.viewer, o.owner, o.id);
    }
  };
  void event(const std::string& what) {
    if (on_event) on_event(what);
  }
  void drop_proxies(const std::function<bool(const proxy_key&)>& which);

  caf::actor_system& sys_;
  caf::actor actor_;
  std::map<std::uint16_t, std::pair<std::string, caf::actor>> published_;  // node -> (listen, actor)
  std::map<link_key, std::uint64_t> links_;  // the live ones, and which connection each is
  std::uint64_t next_link_ = 1;
  std::map<std::pair<std::uint16_t, std::uint16_t>, std::deque<packet>> queues_;  // (from, to)
  std::map<proxy_key, caf::strong_actor_ptr> proxies_;
  std::vector<std::set<std::uint16_t>> groups_;  // empty: no partition
  network_counters counters_;
};

}  // namespace weir::sim

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<weir::sim::packet>)
