// The hello that joins two nodes carries the cluster protocol version
// (messages/cluster_protocol.hpp): a node of another version is answered
// but not taken as a peer, so it never gets heartbeats it would misread,
// and the operator is told once, on either side.
#include <set>

#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>
#include <catch2/catch.hpp>

#include "actors/membership.hpp"
#include "support/fake_identity.hpp"
#include "support/stderr_capture.hpp"
#include "support/test_scheduler.hpp"

using namespace weir;

namespace {

constexpr std::uint16_t this_node = 1;
constexpr std::uint16_t peer_node = 2;
constexpr std::chrono::milliseconds heartbeat{100};
constexpr std::chrono::milliseconds reconnect{5000};
const std::string mismatch_line = "a cluster peer speaks another cluster protocol version";
const std::string unknown_line = "the cluster actor got a message it does not understand";

/// A node that calls this one: its listen address sorts first.
struct answering_harness : test::test_scheduler {
  const std::string peer_listen = "127.0.0.1:9000";
  std::shared_ptr<std::uint16_t> proven = std::make_shared<std::uint16_t>(peer_node);  // what the link proved
  caf::actor identity = test::spawn_fake_identity(sys(), proven);
  membership_actor membership;
  caf::scoped_actor peer{sys()};
  bool last_taken = false;  // the last hello's answer: taken as a member

  answering_harness() {
    membership_settings ms;
    ms.identity = identity;
    ms.node = this_node;
    ms.listen = "127.0.0.1:9001";
    ms.peers = {peer_listen};
    ms.heartbeat = heartbeat;
    membership = spawn_membership(sys(), ms);
    run();
  }
  ~answering_harness() {
    peer->send_exit(membership, caf::exit_reason::user_shutdown);
    peer->send_exit(identity, caf::exit_reason::user_shutdown);
    run();
  }

  /// The answer to a hello in `protocol` from `from` at `listen`: this node's id and protocol.
  std::pair<std::uint16_t, std::uint16_t> hello(std::uint16_t protocol, std::uint16_t from = peer_node,
                                                std::string listen = "") {
    if (listen.empty()) listen = peer_listen;
    auto answer = peer->request(membership, caf::infinite, hello_atom::value, from, listen, protocol);
    run();
    std::pair<std::uint16_t, std::uint16_t> got{0, 0};
    answer.receive([&](std::uint16_t node, std::uint16_t version, bool taken) {
                     got = {node, version};
                     last_taken = taken;
                   },
                   [&](caf::error& e) { FAIL("hello refused: " << caf::to_string(e)); });
    return got;
  }

  /// Heartbeats the peer got over three heartbeat intervals.
  int heartbeats_in_three_beats() {
    for (int i = 0; i < 3; ++i) advance(heartbeat);
    int got = 0;
    bool more = true;
    while (more)
      peer->receive([&](peer_heartbeat& h) { got += h.from == this_node; },
                    caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
    return got;
  }
};

/// What the peer this node calls does and sees.
struct called_peer {
  std::uint16_t protocol = cluster_protocol_version + 1;
  bool understands_hello = true;  // false: a weir from before versioned hellos
  bool takes = true;              // false: it does not list the caller
  int hellos = 0;
  int heartbeats = 0;
};

caf::behavior fake_peer(caf::event_based_actor*, std::shared_ptr<called_peer> p) {
  return {
      [p](hello_atom, std::uint16_t, std::string&, std::uint16_t) -> caf::result<std::uint16_t, std::uint16_t, bool> {
        ++p->hellos;
        if (!p->understands_hello) return caf::make_error(caf::sec::unexpected_message);
        return {peer_node, p->protocol, p->takes};
      },
      [p](peer_heartbeat&) { ++p->heartbeats; },
  };
}

/// Connects to any address by handing out the fake peer.
caf::behavior fake_middleman(caf::event_based_actor*, caf::actor peer) {
  return {
      [peer](caf::connect_atom, std::string&, std::uint16_t) {
        return caf::make_message(caf::node_id{}, caf::actor_cast<caf::strong_actor_ptr>(peer), std::set<std::string>{});
      },
  };
}

/// This node calls the peer: its listen address sorts first.
struct calling_harness : test::test_scheduler {
  std::shared_ptr<called_peer> peer = std::make_shared<called_peer>();
  std::shared_ptr<std::uint16_t> proven = std::make_shared<std::uint16_t>(peer_node);  // what the link proved
  caf::actor identity;
  caf::actor peer_actor;
  caf::actor middleman;
  membership_actor membership;
  caf::scoped_actor self{sys()};

  void start() {
    peer_actor = sys().spawn(fake_peer, peer);
    middleman = sys().spawn(fake_middleman, peer_actor);
    identity = test::spawn_fake_identity(sys(), proven);
    membership_settings ms;
    ms.identity = identity;
    ms.node = this_node;
    ms.listen = "127.0.0.1:9000";
    ms.peers = {"127.0.0.1:9009"};
    ms.heartbeat = heartbeat;
    ms.reconnect_max = reconnect;
    ms.middleman = caf::actor_cast<caf::io::middleman_actor>(middleman);
    membership = spawn_membership(sys(), ms);
    run();
  }
  ~calling_harness() {
    for (const auto& a : {caf::actor_cast<caf::actor>(membership), middleman, peer_actor, identity})
      self->send_exit(a, caf::exit_reason::user_shutdown);
    run();
  }
};

}  // namespace

TEST_CASE("a hello in another cluster protocol version is answered and the peer is not joined", "[actor]") {
  test::stderr_capture log;
  answering_harness h;
  const auto answer = h.hello(cluster_protocol_version + 1);
  CHECK(answer.first == this_node);
  CHECK(answer.second == cluster_protocol_version);
  CHECK(h.heartbeats_in_three_beats() == 0);
  h.hello(cluster_protocol_version + 1);  // asked again: not logged again
  CHECK(log.count(mismatch_line) == 1);

  // The same peer, upgraded, joins.
  const auto again = h.hello(cluster_protocol_version);
  CHECK(again.second == cluster_protocol_version);
  CHECK(h.heartbeats_in_three_beats() >= 2);
}

TEST_CASE("a hello from before versioned hellos is refused and logged once as not understood", "[actor]") {
  test::stderr_capture log;
  answering_harness h;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto answer = h.peer->request(caf::actor_cast<caf::actor>(h.membership), caf::infinite, hello_atom::value,
                                  peer_node, h.peer_listen);
    h.run();
    bool refused = false;
    answer.receive([&](std::uint16_t) { FAIL("an unversioned hello was answered"); },
                   [&](caf::error& e) { refused = e == caf::sec::unexpected_message; });
    CHECK(refused);
  }
  CHECK(log.count(unknown_line) == 1);  // at most once a minute
  CHECK(h.heartbeats_in_three_beats() == 0);
}

TEST_CASE("a called peer that answers in another protocol is not joined until it speaks this one", "[actor]") {
  test::stderr_capture log;
  calling_harness h;
  h.start();
  CHECK(h.peer->hellos == 1);
  for (int i = 0; i < 3; ++i) h.advance(heartbeat);
  CHECK(h.peer->heartbeats == 0);

  h.advance(reconnect);  // asked again at the longest interval
  CHECK(h.peer->hellos == 2);
  CHECK(log.count(mismatch_line) == 1);

  h.peer->protocol = cluster_protocol_version;  // upgraded
  h.advance(reconnect);
  CHECK(h.peer->hellos == 3);
  for (int i = 0; i < 3; ++i) h.advance(heartbeat);
  CHECK(h.peer->heartbeats >= 2);
}

TEST_CASE("a called peer that does not understand a versioned hello is logged as having no version", "[actor]") {
  test::stderr_capture log;
  calling_harness h;
  h.peer->understands_hello = false;
  h.start();
  h.advance(reconnect);
  CHECK(h.peer->hellos == 2);
  for (int i = 0; i < 3; ++i) h.advance(heartbeat);
  CHECK(h.peer->heartbeats == 0);
  CHECK(log.count("peer_protocol=\"none (its hello has no version)\"") == 1);
}

TEST_CASE("a hello is taken only from the node its link proved", "[actor]") {
  test::stderr_capture log;
  answering_harness h;
  *h.proven = 4;  // a certificate of the cluster's CA, but node 4's
  h.hello(cluster_protocol_version);
  CHECK(h.heartbeats_in_three_beats() == 0);
  CHECK(log.count("a cluster peer said hello as another node than its certificate names; not taken") == 1);
  CHECK(log.count("certificate=weir-node-4") == 1);

  *h.proven = peer_node;  // the node itself
  h.hello(cluster_protocol_version);
  CHECK(h.heartbeats_in_three_beats() >= 2);
}

TEST_CASE("a proven node cannot take the place of the node at another cluster.listen", "[actor]") {
  test::stderr_capture log;
  answering_harness h;
  h.hello(cluster_protocol_version);  // node 2 at its own address
  CHECK(h.heartbeats_in_three_beats() >= 2);
  // Node 5, proven, says it is at node 2's address (before, a hello naming
  // an address replaced the live node there).
  *h.proven = 5;
  h.hello(cluster_protocol_version, 5);
  CHECK(log.count("a cluster peer said hello from another node's cluster.listen; not taken") == 1);
  // Node 2 is still the member there: the heartbeats still go to it.
  CHECK(h.heartbeats_in_three_beats() >= 2);
}

TEST_CASE("a called peer whose answer names another node than its link proved is not joined", "[actor]") {
  test::stderr_capture log;
  calling_harness h;
  h.peer->protocol = cluster_protocol_version;
  *h.proven = 7;
  h.start();
  CHECK(h.peer->hellos == 1);
  for (int i = 0; i < 3; ++i) h.advance(heartbeat);
  CHECK(h.peer->heartbeats == 0);
  CHECK(log.count("the node at a cluster peer's address is not the one expected; not joined") == 1);

  *h.proven = peer_node;
  h.advance(reconnect);  // called again
  for (int i = 0; i < 3; ++i) h.advance(heartbeat);
  CHECK(h.peer->heartbeats >= 2);
}

TEST_CASE("a hello from a node not listed is answered as not taken and that node is not failed over",
          "[actor]") {
  test::stderr_capture log;
  answering_harness h;
  h.hello(cluster_protocol_version);
  CHECK(h.last_taken);
  h.hello(cluster_protocol_version, 9, "127.0.0.1:9999");  // proven as 9 below
  CHECK_FALSE(h.last_taken);
  CHECK(log.count("a node not in cluster.peers said hello; not taken") == 1);
}

TEST_CASE("a called peer that does not take this node is said once and asked again", "[actor]") {
  test::stderr_capture log;
  calling_harness h;
  h.peer->protocol = cluster_protocol_version;
  h.peer->takes = false;
  h.start();
  for (int i = 0; i < 3; ++i) h.advance(heartbeat);
  CHECK(h.peer->heartbeats == 0);
  h.advance(reconnect);
  CHECK(h.peer->hellos == 2);
  CHECK(log.count("a cluster peer did not take this node as a member") == 1);
  h.peer->takes = true;  // its cluster.peers fixed
  h.advance(reconnect);
  for (int i = 0; i < 3; ++i) h.advance(heartbeat);
  CHECK(h.peer->heartbeats >= 2);
}
