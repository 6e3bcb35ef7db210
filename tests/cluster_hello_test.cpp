// The hello that joins two nodes carries the cluster protocol version
// (messages/cluster_protocol.hpp): a node of another version is answered
// but not taken as a peer, so it never gets heartbeats it would misread.
#include <caf/scoped_actor.hpp>
#include <catch2/catch.hpp>

#include "actors/membership.hpp"
#include "support/test_scheduler.hpp"

using namespace weir;

namespace {

constexpr std::uint16_t this_node = 1;
constexpr std::uint16_t peer_node = 2;
const std::string peer_listen = "127.0.0.1:9000";  // sorts first: the peer calls this node

struct hello_harness : test::test_scheduler {
  membership_actor membership;
  caf::scoped_actor peer{sys()};

  hello_harness() {
    membership_settings ms;
    ms.node = this_node;
    ms.listen = "127.0.0.1:9001";
    ms.peers = {peer_listen};
    ms.heartbeat = std::chrono::milliseconds(100);
    membership = spawn_membership(sys(), ms);
    run();
  }
  ~hello_harness() {
    peer->send_exit(membership, caf::exit_reason::user_shutdown);
    run();
  }

  /// The answer to a hello in `protocol`: this node's id and protocol.
  std::pair<std::uint16_t, std::uint16_t> hello(std::uint16_t protocol) {
    auto answer = peer->request(membership, caf::infinite, hello_atom::value, peer_node, peer_listen, protocol);
    run();
    std::pair<std::uint16_t, std::uint16_t> got{0, 0};
    answer.receive([&](std::uint16_t node, std::uint16_t version) { got = {node, version}; },
                   [&](caf::error& e) { FAIL("hello refused: " << caf::to_string(e)); });
    return got;
  }

  /// Heartbeats the peer got over three heartbeat intervals.
  int heartbeats_in_three_beats() {
    for (int i = 0; i < 3; ++i) advance(std::chrono::milliseconds(100));
    int got = 0;
    bool more = true;
    while (more)
      peer->receive([&](peer_heartbeat& h) { got += h.from == this_node; },
                    caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
    return got;
  }
};

}  // namespace

TEST_CASE("a hello in another cluster protocol version is answered and the peer is not joined", "[actor]") {
  hello_harness h;
  const auto answer = h.hello(cluster_protocol_version + 1);
  CHECK(answer.first == this_node);
  CHECK(answer.second == cluster_protocol_version);
  CHECK(h.heartbeats_in_three_beats() == 0);

  // The same peer, upgraded, joins.
  const auto again = h.hello(cluster_protocol_version);
  CHECK(again.second == cluster_protocol_version);
  CHECK(h.heartbeats_in_three_beats() >= 2);
}

TEST_CASE("a hello from before versioned hellos is refused as a message the node does not understand", "[actor]") {
  hello_harness h;
  auto answer = h.peer->request(caf::actor_cast<caf::actor>(h.membership), caf::infinite, hello_atom::value, peer_node,
                                peer_listen);
  h.run();
  bool refused = false;
  answer.receive([&](std::uint16_t) { FAIL("an unversioned hello was answered"); },
                 [&](caf::error& e) { refused = e == caf::sec::unexpected_message; });
  CHECK(refused);
  CHECK(h.heartbeats_in_three_beats() == 0);
}
