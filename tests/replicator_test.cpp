// The shard replicator on the test scheduler, shipping to a real replica
// store standing in for a peer: what the peer's copy ends up holding.
#include <filesystem>

#include <caf/scoped_actor.hpp>
#include <catch2/catch.hpp>

#include "actors/replica_store.hpp"
#include "actors/replicator.hpp"
#include "support/faulty_file_io.hpp"
#include "support/test_paths.hpp"
#include "support/test_scheduler.hpp"
#include "wab/segment_writer.hpp"

using namespace weir;

namespace {

constexpr std::uint16_t origin_node = 2;
constexpr std::uint16_t peer_node = 1;

struct replication_harness : test::test_scheduler {
  test::temp_dir dir;
  std::shared_ptr<test::faulty_file_io> io = std::make_shared<test::faulty_file_io>();
  std::string shard_dir = (dir / "origin/shard_00").string();
  replica_store_actor peer_store;
  replicator_actor replicator;
  caf::scoped_actor self{sys()};

  replication_harness() {
    std::filesystem::create_directories(shard_dir);
    peer_store = spawn_replica_store(sys(), {peer_node, (dir / "replica").string(), io,
                                             (dir / "quarantine").string(), actor_thread::scheduler, {}, {}});
    run();
  }
  ~replication_harness() {
    // The replicator's tick timer keeps it alive: the actor system waits for both.
    self->send_exit(replicator, caf::exit_reason::user_shutdown);
    self->send_exit(peer_store, caf::exit_reason::user_shutdown);
    run();
  }

  void start_replicator() {
    replicator_settings rs;
    rs.node = origin_node;
    rs.shard = 0;
    rs.shard_dir = shard_dir;
    rs.io = io;
    rs.thread = actor_thread::scheduler;
    replicator = spawn_replicator(sys(), rs);
    run();
  }

  void peer_up() {
    self->send(replicator, peer_update{peer_node, true, caf::actor_cast<cluster_node_actor>(peer_store)});
    run();
  }

  static void append(wab::segment_writer& w, const std::string& payload) {
    const byte_buffer b(payload.begin(), payload.end());
    REQUIRE(w.append({byte_span(b)}, 5).error == 0);
  }

  /// Where the peer's copy of the origin's shard 0 ends.
  replica_position copy_end() {
    self->send(peer_store, position_atom::value, origin_node, std::uint16_t{0});
    run();
    replica_position at;
    bool answered = false;
    self->receive([&](replica_position& p) { at = p, answered = true; }, caf::after(std::chrono::seconds(0)) >> [] {});
    REQUIRE(answered);
    return at;
  }
};

}  // namespace

// The writer makes its first segment before the replicator lists the shard
// directory: the listing finds a segment without a seal, still growing. Taken
// for a sealed one, the first chunk to catch up sealed the peer's copy there
// and every record written after counted as held: false Replicated acks.
TEST_CASE("replicator: a growing segment found at startup is not shipped as sealed", "[actor][replica]") {
  replication_harness h;
  auto made = wab::segment_writer::create(h.io, h.shard_dir, 0, 1, 1);
  REQUIRE(made);
  auto writer = std::move(made).value();
  replication_harness::append(*writer, "first");

  h.start_replicator();
  h.self->send(h.replicator, appended_atom::value, std::uint64_t{1}, writer->size(), std::uint64_t{1});
  h.peer_up();
  const auto after_first = h.copy_end();
  CHECK(after_first.sequence == 1);
  CHECK(after_first.offset == writer->size());
  CHECK_FALSE(after_first.sealed);

  replication_harness::append(*writer, "second");
  replication_harness::append(*writer, "third");
  h.self->send(h.replicator, appended_atom::value, std::uint64_t{1}, writer->size(), std::uint64_t{3});
  h.run();
  const auto after_three = h.copy_end();
  CHECK(after_three.sequence == 1);
  CHECK(after_three.offset == writer->size());
  CHECK(after_three.next_index == 4);
  CHECK_FALSE(after_three.sealed);

  // Sealed by its writer, the segment is shipped as sealed: the copy is complete.
  REQUIRE(writer->seal() == 0);
  h.self->send(h.replicator, sealed_atom::value, std::uint64_t{1}, writer->size());
  h.run();
  CHECK(h.copy_end().sealed);
}
