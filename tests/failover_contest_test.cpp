// Two survivors that both deliver a failed node's shard (views that never
// met: a restart, a long partition): membership keeps the shard on the node
// whose copy reaches furthest and the other stops its drain and gives its
// copy back. Driven on the test scheduler: this node takes the shard alone,
// then a peer joins that says it delivers the same shard.
#include <caf/scoped_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <catch2/catch.hpp>

#include "actors/membership.hpp"
#include "support/fake_identity.hpp"
#include "support/test_scheduler.hpp"

using namespace weir;

namespace {

constexpr std::uint16_t this_node = 1;
constexpr std::uint16_t origin = 2;  // failed: never heard from
constexpr std::uint16_t rival = 3;
const std::string rival_listen = "127.0.0.1:9003";
// Membership reads the actor clock: the test clock here. The rival beats
// with every tick (keep_beating), or it is suspect after three.
constexpr std::chrono::milliseconds heartbeat{500};
// Zero: the origin, never heard from, is failed from the start.
constexpr std::chrono::milliseconds failover_after{0};

replica_position copy_to(std::uint64_t offset) { return {origin, 0, 1, offset, 1, false}; }

/// What the node asked of its replica store and of its failover hooks.
struct seen {
  std::vector<replica_position> held{copy_to(100)};
  std::vector<std::pair<std::uint16_t, bool>> releases;  // (shard, take)
  std::vector<std::uint16_t> started;                     // shards of `origin`
  std::vector<std::optional<std::uint16_t>> stopped;
};

replica_store_actor::behavior_type fake_store(replica_store_actor::pointer, std::shared_ptr<seen> s) {
  return {
      [](replica_chunk&) { return replica_position{}; },
      [](position_atom, std::uint16_t, std::uint16_t) { return replica_position{}; },
      [](replica_trim&) {},
      [s](held_atom) { return s->held; },
      [s](release_atom, std::uint16_t, std::uint16_t shard, bool take) {
        s->releases.push_back({shard, take});
        return done_atom::value;
      },
      [](retire_atom, std::uint16_t, std::uint64_t) {},
      [](flush_atom) {},
      [](shutdown_atom) { return done_atom::value; },
  };
}

struct contest_harness : test::test_scheduler {
  std::shared_ptr<seen> s = std::make_shared<seen>();
  replica_store_actor store;
  membership_actor membership;
  caf::scoped_actor rival_node{sys()};

  caf::actor identity = test::spawn_fake_identity(sys(), std::make_shared<std::uint16_t>(rival));

  contest_harness() {
    store = sys().spawn(fake_store, s);
    membership_settings ms;
    ms.identity = identity;
    ms.node = this_node;
    ms.listen = "127.0.0.1:9009";  // sorts last: both peers call this node
    ms.peers = {"127.0.0.1:9000", rival_listen};
    ms.heartbeat = heartbeat;
    ms.failover_after = failover_after;
    ms.store = store;
    ms.failover.start = [s = s](std::uint16_t o, std::uint16_t shard) {
      if (o == origin) s->started.push_back(shard);
    };
    ms.failover.stop = [s = s](std::uint16_t o, std::optional<std::uint16_t> shard) {
      if (o == origin) s->stopped.push_back(shard);
      return std::vector<drain_actor>{};
    };
    membership = spawn_membership(sys(), ms);
    run();
  }
  ~contest_harness() {
    rival_node->send_exit(membership, caf::exit_reason::user_shutdown);
    rival_node->send_exit(store, caf::exit_reason::user_shutdown);
    rival_node->send_exit(identity, caf::exit_reason::user_shutdown);
    run();
  }

  /// Heartbeats until the node has taken the failed origin's shard alone
  /// (the origin is failed from the start: failover_after is zero).
  void take_alone() {
    for (int beat = 0; beat < 10 && s->started.empty(); ++beat) advance(heartbeat);
    REQUIRE(s->started == std::vector<std::uint16_t>{0});
  }

  /// The rival joins and says it delivers shard 0 from a copy ending at `offset`.
  void rival_delivers(std::uint64_t offset) {
    auto answer = rival_node->request(membership, caf::infinite, hello_atom::value, rival, rival_listen,
                                      cluster_protocol_version);
    run();
    answer.receive([](std::uint16_t, std::uint16_t, bool taken) { CHECK(taken); },
                   [](caf::error& e) { FAIL(caf::to_string(e)); });
    rival_offset = offset;
    keep_beating(1);  // a tick the store answers: contests are settled there
  }

  /// `beats` heartbeats of time, the rival saying each time that it
  /// delivers shard 0 from a copy ending at its offset.
  void keep_beating(int beats) {
    for (int beat = 0; beat < beats; ++beat) {
      rival_node->send(membership, peer_heartbeat{rival, {copy_to(rival_offset)}, true, {copy_to(rival_offset)}});
      run();
      advance(heartbeat);
    }
  }
  std::uint64_t rival_offset = 0;
};

}  // namespace

TEST_CASE("failover contest: a survivor gives up a shard a peer delivers from a further copy", "[actor]") {
  contest_harness h;
  h.take_alone();
  h.rival_delivers(200);
  REQUIRE(h.s->stopped.size() == 1);
  CHECK(h.s->stopped[0] == std::optional<std::uint16_t>(0));
  // No drain was running, so the copy goes straight back to the store.
  CHECK(h.s->releases.back() == std::pair<std::uint16_t, bool>{0, false});
  // Given up once, not taken again while the rival delivers it.
  h.keep_beating(5);
  CHECK(h.s->started.size() == 1);
  CHECK(h.s->stopped.size() == 1);
}

TEST_CASE("failover contest: a survivor keeps a shard a peer delivers from a shorter copy", "[actor]") {
  contest_harness h;
  h.take_alone();
  h.rival_delivers(50);
  h.keep_beating(5);
  CHECK(h.s->stopped.empty());
  CHECK(h.s->started.size() == 1);
}

TEST_CASE("failover contest: on a tie of copy ends the lower node id keeps the shard", "[actor]") {
  contest_harness h;
  h.take_alone();
  h.rival_delivers(100);
  h.keep_beating(5);
  CHECK(h.s->stopped.empty());  // node 1 < node 3
}
