// The replica store on the test scheduler: chunks arriving together share
// one sync, a chunk is answered only with what a sync covered, a copy that
// moves to its next segment syncs and seals the one it leaves first, and a
// chunk out of order is not taken.
#include <filesystem>
#include <fstream>
#include <vector>

#include <caf/scoped_actor.hpp>
#include <catch2/catch.hpp>

#include "actors/replica_store.hpp"
#include "support/faulty_file_io.hpp"
#include "support/test_paths.hpp"
#include "support/test_scheduler.hpp"
#include "wab/segment_reader.hpp"
#include "wab/segment_writer.hpp"

using namespace weir;

namespace {

/// An origin's segment and the chunks a replicator would cut from it.
struct origin_segment {
  std::vector<replica_chunk> chunks;

  /// `starts_copy`: the first segment a peer gets of it, its first chunk
  /// saying so (`skips`), as the replicator's first chunk after a peer
  /// said its copy holds nothing.
  origin_segment(const std::shared_ptr<wab::file_io>& io, const std::string& dir, std::uint64_t seq,
                 const std::vector<std::string>& payloads, bool sealed, bool starts_copy = false) {
    std::filesystem::create_directories(dir);
    auto made = wab::segment_writer::create(io, dir, 0, seq, 1);
    REQUIRE(made);
    auto w = std::move(made).value();
    std::uint64_t index = 1;
    for (const auto& p : payloads) {
      const byte_buffer b(p.begin(), p.end());
      const auto before = w->size();
      REQUIRE(w->append({byte_span(b)}, 5).error == 0);
      std::ifstream in(w->path(), std::ios::binary);
      byte_buffer file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      replica_chunk c{2, 0, seq, before, index++, 1, byte_buffer(file.begin() + before, file.begin() + w->size()), false};
      chunks.push_back(std::move(c));
    }
    chunks.back().sealed = sealed;
    chunks.front().skips = starts_copy;
  }
};

struct store_harness : test::test_scheduler {
  test::temp_dir dir;
  std::shared_ptr<test::faulty_file_io> io = std::make_shared<test::faulty_file_io>();
  replica_store_actor store;
  caf::scoped_actor self{sys()};
  std::vector<std::string> retired, retired_done;  // what the store handed over for delivery, and took back
  store_harness() { start(); }
  void start() {
    store = spawn_replica_store(sys(), {1, (dir / "replica").string(), io, (dir / "quarantine").string(),
                                        actor_thread::scheduler,
                                        [this](std::uint16_t, std::uint16_t, const std::string& d) { retired.push_back(d); },
                                        [this](const std::string& d) { retired_done.push_back(d); }});
    run();
  }
  void restart() {
    self->send_exit(store, caf::exit_reason::user_shutdown);
    run();
    start();
  }
  /// The store's answer to a position question, or to held.
  replica_position position() {
    self->send(store, position_atom::value, std::uint16_t{2}, std::uint16_t{0});
    run();
    replica_position at;
    self->receive([&](replica_position& p) { at = p; }, caf::after(std::chrono::seconds(0)) >> [] {});
    return at;
  }
  std::string copy_dir() const { return replica_shard_dir((dir / "replica").string(), 2, 0); }

  /// Sends every chunk before the store runs: they arrive together.
  std::vector<replica_position> send_together(const std::vector<replica_chunk>& chunks) {
    for (const auto& c : chunks) self->send(store, c);
    run();
    std::vector<replica_position> answers;
    for (std::size_t i = 0; i < chunks.size(); ++i)
      self->receive([&](replica_position& p) { answers.push_back(p); },
                    caf::after(std::chrono::seconds(0)) >> [] {});
    return answers;
  }
};

}  // namespace

TEST_CASE("replica store: a copy moving to its next segment syncs and seals the one it leaves", "[actor][replica]") {
  store_harness h;
  origin_segment one(h.io, (h.dir / "origin/shard_00").string(), 1, {"a", "b"}, true, true);
  origin_segment two(h.io, (h.dir / "origin2/shard_00").string(), 2, {"c"}, false);
  std::vector<replica_chunk> all = one.chunks;
  all.push_back(two.chunks.front());
  const int syncs_before = h.io->syncs.load();
  const auto answers = h.send_together(all);
  REQUIRE(answers.size() == 3);
  // Segment 1 was synced and sealed before segment 2 was opened, then
  // segment 2 synced: every answer counts only on synced bytes.
  CHECK(h.io->syncs.load() - syncs_before >= 2);
  const auto extent = wab::read_segment_extent(*h.io, h.copy_dir() + "/" + wab::segment_file_name(1));
  REQUIRE(extent);
  int fd = h.io->open_existing(h.copy_dir() + "/" + wab::segment_file_name(1));
  const auto header = wab::read_segment_header(*h.io, fd);
  h.io->close(fd);
  REQUIRE(header);
  CHECK(header.value().seal.has_value());
  CHECK(header.value().seal->records == 2);
  CHECK(answers.back().sequence == 2);
  CHECK(answers.back().next_index == 2);
}

TEST_CASE("replica store: a chunk out of order is not taken and the answer says where the copy ends",
          "[actor][replica]") {
  store_harness h;
  origin_segment one(h.io, (h.dir / "origin/shard_00").string(), 1, {"a", "b", "c"}, false, true);
  auto first = h.send_together({one.chunks[0]});
  REQUIRE(first.size() == 1);
  // The third record without the second: a gap.
  auto gap = h.send_together({one.chunks[2]});
  REQUIRE(gap.size() == 1);
  CHECK(gap[0].sequence == 1);
  CHECK(gap[0].offset == first[0].offset);
  // The same chunk again (a resend after a reconnect) changes nothing.
  auto again = h.send_together({one.chunks[0]});
  CHECK(again[0].offset == first[0].offset);
  // A chunk claiming to come from this node itself is never taken.
  auto own = one.chunks[1];
  own.origin = 1;
  CHECK(h.send_together({own})[0].sequence == 0);
}

TEST_CASE("replica store: a failed sync claims nothing it covered and the copy resumes from the last good one",
          "[actor][replica][faults]") {
  store_harness h;
  origin_segment one(h.io, (h.dir / "origin/shard_00").string(), 1, {"a", "b"}, false, true);
  const auto good = h.send_together({one.chunks[0]});
  REQUIRE(good.size() == 1);
  h.io->fail_next_sync = EIO;
  const auto failed = h.send_together({one.chunks[1]});
  REQUIRE(failed.size() == 1);
  CHECK(failed[0].offset == good[0].offset);  // the second record is not claimed
  // The origin ships again from there; the file is cut back and continued.
  const auto resumed = h.send_together({one.chunks[1]});
  REQUIRE(resumed.size() == 1);
  CHECK(resumed[0].offset > good[0].offset);
  CHECK(resumed[0].next_index == 3);
}

TEST_CASE("replica store: a copy is a prefix and a new segment waits for the current one to be complete",
          "[actor][replica]") {
  store_harness h;
  origin_segment one(h.io, (h.dir / "origin/shard_00").string(), 1, {"a", "b"}, true, true);
  origin_segment two(h.io, (h.dir / "origin2/shard_00").string(), 2, {"c"}, false);
  REQUIRE(h.send_together({one.chunks[0]}).size() == 1);
  // Segment 1's sealed tail went missing on the way: segment 2 must not be
  // taken, or the copy would claim segment 1's tail without holding it.
  auto ahead = h.send_together({two.chunks[0]});
  REQUIRE(ahead.size() == 1);
  CHECK(ahead[0].sequence == 1);
  CHECK_FALSE(ahead[0].sealed);
  // Unless the origin says it skips what it delivered.
  auto skipping = two.chunks[0];
  skipping.skips = true;
  auto taken = h.send_together({skipping});
  REQUIRE(taken.size() == 1);
  CHECK(taken[0].sequence == 2);
}

TEST_CASE("replica store: a copy that holds nothing takes a first segment only from a chunk that says so",
          "[actor][replica]") {
  // A chunk shipped against an earlier end of the copy (pipelined before a
  // failover drain delivered and deleted that copy) must not make the copy
  // claim every segment before it: the origin would count this node for
  // records it never got.
  store_harness h;
  origin_segment later(h.io, (h.dir / "origin/shard_00").string(), 42, {"x", "y"}, false);
  const auto stale = h.send_together({later.chunks[0]});
  REQUIRE(stale.size() == 1);
  CHECK(stale[0].sequence == 0);  // not taken: the copy still holds nothing
  CHECK_FALSE(std::filesystem::exists(h.copy_dir() + "/" + wab::segment_file_name(42)));
  // Told that it skips (the origin asked where the copy ends and starts from its oldest segment): taken.
  auto first = later.chunks[0];
  first.skips = true;
  const auto taken = h.send_together({first});
  REQUIRE(taken.size() == 1);
  CHECK(taken[0].sequence == 42);
  CHECK(taken[0].next_index == 2);
}

TEST_CASE("replica store: a trim deletes the copy's segments the origin delivered and keeps the rest",
          "[actor][replica]") {
  store_harness h;
  origin_segment one(h.io, (h.dir / "origin/shard_00").string(), 1, {"a", "b"}, true, true);
  origin_segment two(h.io, (h.dir / "origin2/shard_00").string(), 2, {"c", "d"}, true);
  origin_segment three(h.io, (h.dir / "origin3/shard_00").string(), 3, {"e"}, false);
  std::vector<replica_chunk> all = one.chunks;
  for (const auto* s : {&two, &three}) all.insert(all.end(), s->chunks.begin(), s->chunks.end());
  REQUIRE(h.send_together(all).size() == 5);
  auto exists = [&](std::uint64_t seq) {
    return std::filesystem::exists(h.copy_dir() + "/" + wab::segment_file_name(seq));
  };
  REQUIRE((exists(1) && exists(2) && exists(3)));
  // The origin confirmed everything before segment 3: 1 and 2 go, 3 stays.
  h.self->send(h.store, replica_trim{2, 0, 3});
  h.run();
  CHECK_FALSE(exists(1));
  CHECK_FALSE(exists(2));
  CHECK(exists(3));
  // The copy goes on at segment 3 as before.
  origin_segment more(h.io, (h.dir / "origin4/shard_00").string(), 3, {"e", "f"}, false);
  const auto next = h.send_together({more.chunks[1]});
  REQUIRE(next.size() == 1);
  CHECK(next[0].sequence == 3);
  CHECK(next[0].next_index == 3);
  // A trim for another origin's copy leaves this one alone.
  h.self->send(h.store, replica_trim{3, 0, 10});
  h.run();
  CHECK(exists(3));
}

namespace {

std::vector<replica_chunk> of_life(std::vector<replica_chunk> chunks, std::uint64_t life) {
  for (auto& c : chunks) c.incarnation = life;
  return chunks;
}

}  // namespace

TEST_CASE("replica store: a chunk of the origin's next life retires the copy of the last and starts a new one",
          "[actor][replica]") {
  store_harness h;
  origin_segment first_life(h.io, (h.dir / "origin/shard_00").string(), 7, {"a", "b"}, false, true);
  origin_segment next_life(h.io, (h.dir / "origin2/shard_00").string(), 5000, {"c"}, false, true);
  const auto held = h.send_together(of_life(first_life.chunks, 0xaa));
  REQUIRE(held.back().sequence == 7);
  CHECK(held.back().incarnation == 0xaa);
  // A trim from another life says nothing of this copy.
  h.self->send(h.store, replica_trim{2, 0, 100, 0xbb});
  h.run();
  CHECK(std::filesystem::exists(h.copy_dir() + "/" + wab::segment_file_name(7)));

  const auto taken = h.send_together(of_life({next_life.chunks.front()}, 0xbb));
  REQUIRE(taken.size() == 1);
  CHECK(taken[0].sequence == 5000);
  CHECK(taken[0].incarnation == 0xbb);
  // The first life's copy went aside, whole, for this node to deliver.
  REQUIRE(h.retired.size() == 1);
  CHECK(h.retired[0].find("retired/node_2-00000000000000aa/shard_00") != std::string::npos);
  CHECK(std::filesystem::exists(h.retired[0] + "/" + wab::segment_file_name(7)));
  CHECK_FALSE(std::filesystem::exists(h.copy_dir() + "/" + wab::segment_file_name(7)));
  // After a restart the retired copy is handed over again, until delivered.
  h.restart();
  REQUIRE(h.retired.size() == 2);
  CHECK(h.retired[1] == h.retired[0]);
  CHECK(h.position().incarnation == 0xbb);
  std::filesystem::remove(h.retired[0] + "/" + wab::segment_file_name(7));  // its drain delivered it
  h.self->send(h.store, held_atom::value);
  h.run();
  REQUIRE(h.retired_done.size() == 1);
  CHECK_FALSE(std::filesystem::exists(h.retired[0]));
}

TEST_CASE("replica store: told the origin lives on as another life the store retires its copy", "[actor][replica]") {
  store_harness h;
  origin_segment first_life(h.io, (h.dir / "origin/shard_00").string(), 3, {"a"}, false, true);
  h.send_together(of_life(first_life.chunks, 0x11));
  h.self->send(h.store, retire_atom::value, std::uint16_t{2}, std::uint64_t{0x11});  // the same life: kept
  h.run();
  CHECK(h.retired.empty());
  h.self->send(h.store, retire_atom::value, std::uint16_t{2}, std::uint64_t{0x22});
  h.run();
  REQUIRE(h.retired.size() == 1);
  CHECK(h.position().sequence == 0);  // the next life's copy starts empty
  // A copy a failover drain has is not retired under it.
  origin_segment again(h.io, (h.dir / "origin3/shard_00").string(), 9, {"b"}, false, true);
  h.send_together(of_life(again.chunks, 0x33));
  h.self->send(h.store, release_atom::value, std::uint16_t{2}, std::uint16_t{0}, true);
  h.self->send(h.store, retire_atom::value, std::uint16_t{2}, std::uint64_t{0x44});
  h.run();
  CHECK(h.retired.size() == 1);
}
