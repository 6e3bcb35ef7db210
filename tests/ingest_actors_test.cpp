// The ingest actors' protocols, driven directly with CAF: shard_writer and
// fsync_group over a file I/O seam that can make any call fail. The central
// property: no Durable ack leaves before the fdatasync that covers it has
// returned success. Deterministic: both actors run on CAF's test scheduler in
// this thread; a test can run the writer alone (the fsync group's work then
// waits in its mailbox), and timers fire only when it moves the test clock.
// Requests carry the daemon's reply channel over a recording socket, as a
// connection's do: a test sees a reply when it would leave on the socket.
#include <deque>
#include <filesystem>
#include <functional>
#include <optional>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <catch2/catch.hpp>

#include "actors/append_notice.hpp"
#include "actors/fsync_group.hpp"
#include "actors/segment_preparer.hpp"
#include "actors/reply_queue.hpp"
#include "actors/shard_writer.hpp"
#include "messages/ingest_protocol.hpp"
#include "observability/metrics.hpp"
#include "wire/batch.hpp"
#include "wire/coordinate.hpp"
#include "wire/frame.hpp"
#include "wab/segment_format.hpp"
#include "support/test_scheduler.hpp"
#include "support/faulty_file_io.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "support/wab_contents.hpp"

using namespace weir;
using namespace std::chrono_literals;

namespace {

byte_buffer bytes_of(const std::string& s) { return byte_buffer(s.begin(), s.end()); }

/// The socket under the harness's reply channel: each reply written, in
/// order, with the records it acked as the channel counted them.
class recording_socket : public connection_io {
 public:
  explicit recording_socket(metrics& stats) : stats_(stats) {}
  void write(byte_buffer bytes) override {
    const double acked = acked_total();
    writes.push_back({tags.front(), std::move(bytes), static_cast<std::uint32_t>(acked - counted_)});
    tags.pop_front();
    counted_ = acked;
  }
  void consumed(bool, std::uint64_t, std::uint64_t) override {}
  void hold_frame(std::uint64_t) override {}
  void set_replies_owed(bool) override {}
  bool write_blocked() const override { return false; }
  void close() override {}
  void abort() override {}
  bool unread_input() const override { return false; }

  std::deque<std::uint64_t> tags;    // the harness's tags of the open slots
  std::deque<ingest_reply> writes;  // written, not yet looked at

 private:
  double acked_total() const {
    return stats_.tier(tier_label::buffered).acked->Value() + stats_.tier(tier_label::durable).acked->Value();
  }
  metrics& stats_;
  double counted_ = 0;
};

/// The writer and its fsync group with a connection's side of the protocol:
/// every request carries the daemon's reply channel over a recording socket,
/// and replies sent by message are put into it as the connection actor does,
/// so what a test sees is what would leave on the socket, in its order.
struct ingest_harness : test::test_scheduler {
  test::temp_dir dir;
  std::filesystem::path shard_dir = dir / "wab/shard_00";
  std::shared_ptr<test::faulty_file_io> io = std::make_shared<test::faulty_file_io>();
  std::shared_ptr<wab::wab_usage> usage;
  std::optional<caf::scoped_actor> self;
  shard_writer_actor writer;
  metrics stats{dir.path().string(), 1};
  std::shared_ptr<recording_socket> socket = std::make_shared<recording_socket>(stats);
  reply_channel channel = std::make_shared<reply_queue>(socket, &stats, nullptr);
  /// False: requests go without the channel (runtime.direct_replies: false),
  /// and every reply comes by message.
  bool bring_channel = true;

  /// `tune` may change the writer's settings from the defaults (and make
  /// actors in the harness's system for them).
  explicit ingest_harness(fsync_group_settings fs = {}, std::uint64_t segment_max = 1 << 20,
                          std::uint64_t cap = 1ull << 30,
                          std::function<void(shard_writer_settings&, caf::actor_system&)> tune = {}) {
    std::filesystem::create_directories(shard_dir);
    usage = std::make_shared<wab::wab_usage>(cap);
    self.emplace(sys());
    shard_writer_settings ws;
    ws.shard_dir = shard_dir.string();
    ws.segment_max_bytes = segment_max;
    ws.io = io;
    ws.usage = usage;
    ws.thread = actor_thread::scheduler;
    if (tune) tune(ws, sys());
    fs.thread = actor_thread::scheduler;
    writer = spawn_shard_writer(sys(), ws, spawn_fsync_group(sys(), fs));
    run();
    // The writer created its first segment (one header sync) as it started.
    REQUIRE(io->syncs_done.load() == 1);
  }
  ~ingest_harness() {
    caf::anon_send_exit(writer, caf::exit_reason::user_shutdown);
    run();
    CHECK(channel->ignored_fills() == 0);  // no request answered twice, none answered unasked
    channel->abandon();
  }

  /// Runs only the shard writer: what it hands the fsync group waits there,
  /// as if that group's fdatasync had not returned yet.
  void run_writer() { run_only(writer); }
  /// Runs one message of the shard writer, and nothing else.
  void step_writer() {
    REQUIRE(sched().prioritize(writer));
    sched().run_once();
  }

  void push(std::uint64_t tag, const std::string& payload, bool durable, ingest_kind kind = ingest_kind::push) {
    ingest_request r;
    r.kind = kind;
    r.durable = durable;
    r.body = bytes_of(payload);
    send(tag, std::move(r));
  }

  void push_batch(std::uint64_t tag, const std::vector<std::string>& records, bool durable) {
    ingest_request r;
    r.kind = ingest_kind::batch;
    r.durable = durable;
    for (const auto& rec : records) {
      r.bounds.push_back(static_cast<std::uint32_t>(r.body.size()));
      r.bounds.push_back(static_cast<std::uint32_t>(rec.size()));
      r.body.insert(r.body.end(), rec.begin(), rec.end());
    }
    send(tag, std::move(r));
  }

  /// Sends `r` as the connection does, with a slot opened for it.
  void send(std::uint64_t tag, ingest_request r) {
    const auto records = static_cast<std::uint32_t>(r.record_count());
    r.tag = channel->open({r.durable ? tier_label::durable : tier_label::buffered, records, {}, 0});
    socket->tags.push_back(tag);
    if (bring_channel) r.replies = channel;
    r.reply_to = caf::actor_cast<ingest_client_actor>(*self);
    (*self)->send(writer, std::move(r));
  }

  /// A reply sent by message that has arrived, as it came (the test's
  /// actors run first to have one).
  std::optional<ingest_reply> arrived_message() {
    std::optional<ingest_reply> out;
    (*self)->receive([&](ingest_reply& r) { out = std::move(r); }, caf::after(std::chrono::seconds(0)) >> [] {});
    return out;
  }
  /// The next reply written on the socket, with the test's tag: replies by
  /// message that arrived are put into the channel first.
  std::optional<ingest_reply> arrived_reply() {
    while (auto m = arrived_message()) channel->fill(m->tag, std::move(m->frame), m->acked);
    if (socket->writes.empty()) return std::nullopt;
    auto r = std::move(socket->writes.front());
    socket->writes.pop_front();
    return r;
  }
  /// Runs everything, then the next reply.
  std::optional<ingest_reply> next_reply() {
    run();
    return arrived_reply();
  }

  std::vector<ingest_reply> replies(std::size_t n) {
    std::vector<ingest_reply> out;
    while (out.size() < n)
      if (auto r = next_reply()) out.push_back(std::move(*r));
      else break;
    return out;
  }
};

wire::message_type type_of(const ingest_reply& r) {
  auto f = wire::decode_frame(r.frame);
  REQUIRE(f);
  return f.value().header.type;
}

wire::record_coordinate coordinate_of(const ingest_reply& r) {
  auto f = wire::decode_frame(r.frame);
  REQUIRE(f);
  REQUIRE(f.value().header.type == wire::message_type::ack_tracked);
  auto c = wire::decode_coordinate(f.value().payload);
  REQUIRE(c);
  return c.value();
}

std::vector<bool> bitmap_of(const ingest_reply& r, std::size_t n) {
  auto f = wire::decode_frame(r.frame);
  REQUIRE(f);
  REQUIRE(f.value().header.type == wire::message_type::ack_batch);
  auto bits = wire::decode_ack_batch(f.value().payload, n);
  REQUIRE(bits);
  return bits.value();
}

bool is_internal_error_nack(const ingest_reply& r) { return r.frame == wire::encode_nack(wire::nack_reason::internal_error); }

}  // namespace

TEST_CASE("a Durable ack is sent only after its fdatasync returned", "[actor][ingest][durable]") {
  ingest_harness h;
  h.bring_channel = GENERATE(true, false);
  const int before = h.io->syncs.load();  // creating the segment synced once
  // Look from inside the fdatasync: the ack must not be out yet.
  int syncs_seen = 0, replies_during_sync = 0;
  h.io->during_sync = [&] {
    ++syncs_seen;
    if (h.arrived_reply()) ++replies_during_sync;
  };
  h.push(1, "must be on disk first", true);
  h.run_writer();
  // The record is written; its sync waits at the fsync group: no ack.
  CHECK(test::shard_records(h.shard_dir).size() == 1);
  CHECK_FALSE(h.arrived_reply());
  CHECK(h.io->syncs.load() == before);
  auto r = h.next_reply();  // the fsync group runs
  REQUIRE(r);
  CHECK(syncs_seen == 1);
  CHECK(replies_during_sync == 0);
  CHECK(h.io->syncs_done.load() == before + 1);
  CHECK(r->tag == 1);
  CHECK(r->acked == 1);
  CHECK(type_of(*r) == wire::message_type::ack);
}

TEST_CASE("a Buffered ack follows the write without waiting for any sync", "[actor][ingest][buffered]") {
  ingest_harness h;
  h.bring_channel = GENERATE(true, false);
  const int before = h.io->syncs.load();
  h.push(7, "page cache is enough", false);
  h.run_writer();  // the fsync group never runs
  auto r = h.arrived_reply();
  REQUIRE(r);
  CHECK(r->tag == 7);
  CHECK(type_of(*r) == wire::message_type::ack);
  CHECK(h.io->syncs.load() == before);
  const auto on_disk = test::shard_records(h.shard_dir);
  REQUIRE(on_disk.size() == 1);
  CHECK(on_disk[0].payload == "page cache is enough");
}

TEST_CASE("records waiting at the fsync group when a sync runs share it (adaptive group commit)",
          "[actor][ingest][group]") {
  ingest_harness h;
  const int before = h.io->syncs.load();
  h.push(0, "first", true);
  h.run_writer();
  for (std::uint64_t t = 1; t <= 20; ++t) h.push(t, "rider " + std::to_string(t), true);
  h.run_writer();
  REQUIRE(test::shard_records(h.shard_dir).size() == 21);
  CHECK_FALSE(h.arrived_reply());
  auto acks = h.replies(21);
  REQUIRE(acks.size() == 21);
  for (auto& a : acks) CHECK(type_of(a) == wire::message_type::ack);
  CHECK(h.io->syncs.load() == before + 1);  // one fdatasync for all 21
  // A lone producer waits on no timer: its record is synced at once.
  h.push(21, "alone", true);
  REQUIRE(h.next_reply());
  CHECK(h.io->syncs.load() == before + 2);
}

TEST_CASE("the deadline policy syncs at max_records or after max_delay_us", "[actor][ingest][group]") {
  fsync_group_settings fs;
  fs.policy = commit_policy::deadline;
  fs.max_delay_us = 10'000'000;  // far away: only the record count can trigger
  fs.max_records = 3;
  ingest_harness h(fs);
  const int before = h.io->syncs.load();
  h.push(1, "a", true);
  h.push(2, "b", true);
  CHECK_FALSE(h.next_reply());
  CHECK(h.io->syncs.load() == before);
  h.push(3, "c", true);
  auto acks = h.replies(3);
  REQUIRE(acks.size() == 3);
  CHECK(h.io->syncs.load() == before + 1);

  fsync_group_settings quick = fs;
  quick.max_delay_us = 20'000;
  quick.max_records = 1000;
  ingest_harness t(quick);
  t.push(1, "lonely", true);
  CHECK_FALSE(t.next_reply());
  t.advance(19ms);
  CHECK_FALSE(t.arrived_reply());
  t.advance(1ms);  // max_delay_us after the first waiting record
  auto r = t.arrived_reply();
  REQUIRE(r);
  CHECK(type_of(*r) == wire::message_type::ack);
}

TEST_CASE("a failed fdatasync acks nothing it covers and the shard continues in a new segment",
          "[actor][ingest][faults]") {
  ingest_harness h;
  h.bring_channel = GENERATE(true, false);
  // Both requests are written before the failing sync runs: it covers both.
  h.io->fail_next_sync = EIO;
  h.push(1, "lost to EIO", true, ingest_kind::tracked);
  h.run_writer();
  h.push_batch(2, {"x", "y"}, true);
  h.run_writer();
  REQUIRE(test::shard_records(h.shard_dir).size() == 3);
  auto failed = h.replies(2);
  REQUIRE(failed.size() == 2);
  CHECK(is_internal_error_nack(failed[0]));
  CHECK(bitmap_of(failed[1], 2) == std::vector<bool>{false, false});
  CHECK(failed[0].acked == 0);
  CHECK(failed[1].acked == 0);

  h.push(3, "after the fault", true, ingest_kind::tracked);
  auto ok = h.next_reply();
  REQUIRE(ok);
  CHECK(ok->acked == 1);
  const auto c = coordinate_of(*ok);
  CHECK(c.segment == "shard_00/seg_00000002.wab");
  CHECK(c.index == 1);
  CHECK(c.id == wire::compute_record_id(c.segment, 1, bytes_of("after the fault")));
}

TEST_CASE("a disk filling mid-batch acks exactly the records that landed whole", "[actor][ingest][faults][batch]") {
  const bool bring_channel = GENERATE(true, false);
  for (bool durable : {true, false}) {
    ingest_harness h;
    h.bring_channel = bring_channel;
    std::vector<std::string> nine;
    for (int i = 0; i < 9; ++i) nine.push_back("record-" + std::to_string(i));  // 8 bytes each
    // Five whole records (16-byte header + 8) and part of the sixth.
    h.io->short_next_write = 5 * (wab::record_header_size + 8) + 3;
    h.push_batch(1, nine, durable);
    auto r = h.next_reply();
    REQUIRE(r);
    CHECK(bitmap_of(*r, 9) == std::vector<bool>{true, true, true, true, true, false, false, false, false});
    CHECK(r->acked == 5);  // what the connection counts, without reading the frame
    // The wire bytes of that bitmap: 0x1f then 0x00.
    CHECK(r->frame[wire::header_size + 3] == 0x1f);
    CHECK(r->frame[wire::header_size + 4] == 0x00);
    h.push(2, "next", durable, ingest_kind::tracked);
    auto next = h.next_reply();
    REQUIRE(next);
    CHECK(coordinate_of(*next).segment == "shard_00/seg_00000002.wab");
    const auto on_disk = test::shard_records(h.shard_dir);
    REQUIRE(on_disk.size() == 6);
    CHECK(on_disk[4].payload == "record-4");
    CHECK(on_disk[5].payload == "next");
  }
}

TEST_CASE("segments rotate at wab.segment_max_bytes and tracked coordinates follow", "[actor][ingest][rotation]") {
  ingest_harness h({}, 200);
  std::vector<wire::record_coordinate> coords;
  for (std::uint64_t t = 0; t < 12; ++t) {
    h.push(t, "payload-" + std::to_string(t) + std::string(20, '.'), t % 2 == 0, ingest_kind::tracked);
    auto r = h.next_reply();
    REQUIRE(r);
    coords.push_back(coordinate_of(*r));
  }
  CHECK(coords.front().segment == "shard_00/seg_00000001.wab");
  CHECK(coords.back().segment != coords.front().segment);
  const auto on_disk = test::shard_records(h.shard_dir);
  REQUIRE(on_disk.size() == 12);
  for (std::size_t i = 0; i < 12; ++i) {
    CHECK(on_disk[i].segment == coords[i].segment);
    CHECK(on_disk[i].index == coords[i].index);
    CHECK(coords[i].id == wire::compute_record_id(coords[i].segment, coords[i].index, bytes_of(on_disk[i].payload)));
  }
}

TEST_CASE("a shard whose directory fails goes offline and comes back when it clears", "[actor][ingest][faults]") {
  ingest_harness h({}, 1 << 20, 1ull << 30, [](shard_writer_settings& ws, caf::actor_system&) { ws.segment_retry_ms = 250; });
  h.io->fail_next_write = EIO;  // closes the first segment
  h.io->fail_creates = ENOSPC;  // and no new one can be made
  h.push(1, "refused", true);
  auto r = h.next_reply();
  REQUIRE(r);
  CHECK(is_internal_error_nack(*r));
  h.push(2, "still refused", false);
  r = h.next_reply();
  REQUIRE(r);
  CHECK(is_internal_error_nack(*r));
  h.io->fail_creates = 0;
  // Creation is retried on a timer (wab.segment_retry_ms, 250 ms here), not by pushes.
  h.advance(249ms);
  h.push(3, "not yet", true);
  r = h.next_reply();
  REQUIRE(r);
  CHECK(is_internal_error_nack(*r));
  h.advance(1ms);
  h.push(4, "back", true);
  r = h.next_reply();
  REQUIRE(r);
  CHECK(type_of(*r) == wire::message_type::ack);
}

TEST_CASE("over limits.wab_max_bytes records are refused until usage falls under 90 %", "[actor][ingest][cap]") {
  ingest_harness h({}, 1 << 20, 1000);
  std::size_t acked = 0, refused = 0;
  for (std::uint64_t t = 0; t < 40; ++t) {
    h.push(t, std::string(40, 'c'), false);
    auto r = h.next_reply();
    REQUIRE(r);
    (is_internal_error_nack(*r) ? refused : acked) += 1;
  }
  CHECK(acked > 0);
  CHECK(refused > 0);
  CHECK(h.usage->over_cap());
  CHECK(h.usage->rejections() == refused);
  h.push_batch(50, {"one", "two", "three"}, false);  // a batch is refused whole, and counted by its records
  auto batch = h.next_reply();
  REQUIRE(batch);
  CHECK(h.usage->rejections() == refused + 3);
  h.usage->remove(h.usage->bytes() - 950);  // the drain freed space, but not below 90 %
  h.push(100, "still over", false);
  auto r = h.next_reply();
  REQUIRE(r);
  CHECK(is_internal_error_nack(*r));
  h.usage->remove(h.usage->bytes() - 899);
  h.push(101, "resumed", false);
  r = h.next_reply();
  REQUIRE(r);
  CHECK(type_of(*r) == wire::message_type::ack);
}

TEST_CASE("shutdown writes and syncs what is queued before the writer answers done", "[actor][ingest][shutdown]") {
  ingest_harness h;
  for (std::uint64_t t = 0; t < 50; ++t) h.push(t, "queued " + std::to_string(t), true);
  (*h.self)->send(h.writer, shutdown_atom::value);
  h.run();
  // The replies (by message, or written already) come before done.
  bool done = false;
  while (!done) {
    bool got = false;
    (*h.self)->receive([&](ingest_reply& r) { got = true, h.channel->fill(r.tag, std::move(r.frame), r.acked); },
                       [&](done_atom) { got = done = true; }, caf::after(std::chrono::seconds(0)) >> [] {});
    REQUIRE(got);
  }
  std::size_t acks = 0;
  for (const auto& r : h.socket->writes) acks += type_of(r) == wire::message_type::ack;
  CHECK(acks == 50);
  CHECK(test::shard_records(h.shard_dir).size() == 50);
}

TEST_CASE("a group is written at once when it reaches group_commit.max_bytes", "[actor][ingest][group]") {
  const std::string sixty(60, 'g');
  for (std::uint64_t max_bytes : {std::uint64_t{4} << 20, std::uint64_t{100}}) {
    INFO("max_group_bytes " << max_bytes);
    ingest_harness h({}, 1 << 20, 1ull << 30, [&](shard_writer_settings& ws, caf::actor_system&) { ws.max_group_bytes = max_bytes; });
    const int before = h.io->writes.load();
    for (std::uint64_t t = 0; t < 3; ++t) h.push(t, sixty, false);
    h.run_writer();
    REQUIRE(h.replies(3).size() == 3);
    // Under the limit the three share one write; at 100 bytes the second
    // record fills the group, which goes at once, and the third goes alone.
    CHECK(h.io->writes.load() - before == (max_bytes == 100 ? 2 : 1));
  }
}

namespace {

/// A writer and an fsync group that count the group's outstanding syncs
/// (the daemon's wiring): the writer syncs a lone group itself when the
/// group is idle.
struct shared_load_harness {
  std::shared_ptr<sync_load> load = std::make_shared<sync_load>();
  std::chrono::milliseconds buffered_quiet;
  ingest_harness h;

  explicit shared_load_harness(std::chrono::milliseconds quiet = std::chrono::hours(1))
      : buffered_quiet(quiet),
        h{settings(), 1 << 20, 1ull << 30, [this](shard_writer_settings& ws, caf::actor_system&) {
            ws.sync_load = load;
            ws.sync_durable_only_here = true;
            ws.buffered_quiet = buffered_quiet;
          }} {}

  fsync_group_settings settings() const {
    fsync_group_settings fs;
    fs.load = load;
    return fs;
  }
};

}  // namespace

TEST_CASE("with its fsync group idle the writer syncs a Durable group itself and acks only after the sync",
          "[actor][ingest][durable]") {
  shared_load_harness both;
  auto& h = both.h;
  h.bring_channel = GENERATE(true, false);
  auto& load = both.load;
  const int before = h.io->syncs.load();
  int replies_during_sync = 0;
  h.io->during_sync = [&] {
    if (h.arrived_reply()) ++replies_during_sync;
  };
  h.push(1, "a lone producer", true);
  h.run_writer();  // the fsync group never runs: the writer synced
  CHECK(h.io->syncs_done.load() == before + 1);
  CHECK(replies_during_sync == 0);
  auto r = h.arrived_reply();
  REQUIRE(r);
  CHECK(r->acked == 1);
  CHECK(type_of(*r) == wire::message_type::ack);

  // With a sync outstanding at the group, Durable requests go there, so that
  // the writer goes on writing while the group syncs.
  load->handed_to_group(1);
  h.push(2, "under load", true);
  h.run_writer();
  CHECK_FALSE(h.arrived_reply());
  CHECK(h.io->syncs_done.load() == before + 1);
  auto later = h.next_reply();
  REQUIRE(later);
  CHECK(later->tag == 2);
  CHECK(h.io->syncs_done.load() == before + 2);
  CHECK(load->outstanding() == 1);  // the group gave back what it took
}

namespace {

/// The writer takes request `tag` and sends itself its flush; request
/// `tag + 1` comes in behind that flush, so it waits in the mailbox while
/// `tag` is written. True when the writer synced that write itself.
bool writes_one_with_another_waiting(shared_load_harness& both, std::uint64_t tag) {
  auto& h = both.h;
  const int before = h.io->syncs_done.load();
  const auto handed_before = both.load->outstanding();
  h.push(tag, "written", true);
  h.step_writer();
  h.push(tag + 1, "waiting", true);
  h.step_writer();
  if (h.io->syncs_done.load() == before + 1) return true;
  REQUIRE(both.load->outstanding() == handed_before + 1);  // handed to the fsync group
  return false;
}

}  // namespace

TEST_CASE("with only Durable pushes the writer syncs a flushed group itself though more wait", "[actor][ingest][durable]") {
  shared_load_harness both;
  const int before = both.h.io->syncs_done.load();
  CHECK(writes_one_with_another_waiting(both, 1));
  both.h.run_writer();  // request 2: its own group, synced here too
  CHECK(both.h.io->syncs_done.load() == before + 2);
  // The writer answered request 2 at once; the fsync group, which has not
  // run yet, answers request 1 (more waited after its sync). The connection
  // writes replies in tag order: 2's waits in the channel until 1's comes.
  CHECK_FALSE(both.h.arrived_reply());
  CHECK(both.load->replies_handed_count() == 1);  // request 1's only: the writer answered 2 itself
  auto first = both.h.next_reply();
  REQUIRE(first);
  CHECK(first->tag == 1);
  auto second = both.h.arrived_reply();
  REQUIRE(second);
  CHECK(second->tag == 2);
  CHECK(both.h.io->syncs_done.load() == before + 2);  // the group synced nothing itself
  for (const auto* r : {&*first, &*second}) CHECK(r->acked == 1);
  CHECK(both.load->outstanding() == 0);
}

TEST_CASE("after a Buffered push the writer hands flushed groups with more waiting to its fsync group until a quiet spell",
          "[actor][ingest][durable]") {
  SECTION("within the quiet time the fsync group syncs, so the writer is free for the next Buffered push") {
    shared_load_harness both;  // an hour
    both.h.push(1, "buffered", false);
    both.h.run_writer();
    CHECK_FALSE(writes_one_with_another_waiting(both, 2));
    for (std::uint64_t tag : {1, 2, 3}) {
      auto r = both.h.next_reply();
      REQUIRE(r);
      CHECK(r->tag == tag);
      CHECK(r->acked == 1);
    }
  }
  SECTION("once the quiet time has passed the writer syncs itself again") {
    shared_load_harness both(std::chrono::milliseconds(0));  // passed as soon as the push is queued
    both.h.push(1, "buffered", false);
    both.h.run_writer();
    CHECK(writes_one_with_another_waiting(both, 2));
  }
}

TEST_CASE("a group cut at the size limit with more waiting goes to the fsync group even with only Durable pushes",
          "[actor][ingest][durable]") {
  shared_load_harness both;
  auto& h = both.h;
  // Three requests of max_group_records / 2 each: the second fills a group,
  // written at once while the third still waits.
  const std::vector<std::string> half(4096 / 2, "r");
  for (std::uint64_t tag : {1, 2, 3}) h.push_batch(tag, half, true);
  const int before = h.io->syncs_done.load();
  h.step_writer();
  h.step_writer();
  CHECK(h.io->syncs_done.load() == before);
  CHECK(both.load->outstanding() == 2);
}

TEST_CASE("the writer moves a growing segment onto a spare once one is ready and asks for the next at half full",
          "[actor][ingest][spares]") {
  test::test_scheduler t;
  test::temp_dir dir;
  const auto shard_dir = dir / "wab/shard_00";
  std::filesystem::create_directories(shard_dir);
  constexpr std::uint64_t segment_bytes = 64 * 1024;
  auto io = wab::default_file_io();
  auto spares = std::make_shared<wab::spare_pool>(io, shard_dir.string(), segment_bytes, 1, 0);
  segment_preparer_settings ps{spares, actor_thread::scheduler};
  shard_writer_settings ws;
  ws.shard_dir = shard_dir.string();
  ws.segment_max_bytes = segment_bytes;
  ws.io = io;
  ws.usage = std::make_shared<wab::wab_usage>(1ull << 30);
  ws.spares = spares;
  ws.preparer = spawn_segment_preparer(t.sys(), ps);
  ws.thread = actor_thread::scheduler;
  fsync_group_settings fs;
  fs.thread = actor_thread::scheduler;
  auto writer = spawn_shard_writer(t.sys(), ws, spawn_fsync_group(t.sys(), fs));
  t.run();
  // Segment 1 grew until the spare was ready; the writer sealed it and went on in segment 2, in the spare.
  CHECK(std::filesystem::file_size(shard_dir / wab::segment_file_name(1)) == wab::segment_prefix_size);
  CHECK(std::filesystem::file_size(shard_dir / wab::segment_file_name(2)) == segment_bytes);
  CHECK(spares->held() == 0);  // taken, and no other asked for while segment 2 is not half full

  caf::scoped_actor self{t.sys()};
  auto push = [&](std::uint64_t tag, std::size_t bytes) {
    ingest_request r;
    r.tag = tag;
    r.reply_to = caf::actor_cast<ingest_client_actor>(self);
    r.durable = false;
    r.body = byte_buffer(bytes, 'x');
    self->send(writer, std::move(r));
    t.run();
  };
  push(1, 16 * 1024);
  CHECK(spares->held() == 0);
  push(2, 20 * 1024);  // past half of the segment: the next spare is prepared
  CHECK(spares->held() == 1);
  push(3, 30 * 1024);  // full: rotation into that spare
  CHECK(spares->held() == 0);
  CHECK(std::filesystem::file_size(shard_dir / wab::segment_file_name(3)) == segment_bytes);
  caf::anon_send_exit(writer, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(ws.preparer, caf::exit_reason::user_shutdown);
  t.run();
}

TEST_CASE("the writer's replies go straight into the reply channel and those of a group the fsync group synced by message",
          "[actor][ingest][durable]") {
  shared_load_harness both;
  auto& h = both.h;
  auto& load = both.load;
  const auto& written = h.socket->writes;
  std::uint64_t next_tag = 0;
  auto send = [&](bool durable) {
    ingest_request r;
    r.durable = durable;
    r.body = bytes_of("direct");
    h.send(next_tag++, std::move(r));
  };
  std::size_t written_during_sync = 0;
  h.io->during_sync = [&] { written_during_sync += written.size(); };
  const int before = h.io->syncs_done.load();
  send(true);
  h.run_writer();
  CHECK(h.io->syncs_done.load() == before + 1);
  CHECK(written_during_sync == 0);  // not before the sync returned
  REQUIRE(written.size() == 1);
  CHECK(written[0].frame == wire::encode_ack());
  CHECK(written[0].acked == 1);
  CHECK_FALSE(h.arrived_message());  // and no message besides

  send(false);  // a lone Buffered push: written after the write
  h.run_writer();
  CHECK(written.size() == 2);
  send(false);  // two in one group: the writer writes both replies
  send(false);
  h.run_writer();
  CHECK(written.size() == 4);
  CHECK_FALSE(h.arrived_message());

  // Two requests in one group, synced by the writer itself: it writes both
  // replies too, after its sync.
  send(true);
  send(true);
  written_during_sync = 0;
  h.run_writer();
  CHECK(h.io->syncs_done.load() == before + 2);
  CHECK(written_during_sync == 4);  // the four written before: none of these
  CHECK(written.size() == 6);
  CHECK_FALSE(h.arrived_message());

  // Two requests of two groups the fsync group syncs together (a sync is
  // outstanding there, so the writer hands each on): each connection's own
  // thread writes its reply, sent to it by message.
  load->handed_to_group(1);
  send(true);
  h.run_writer();
  send(true);
  h.run_writer();
  h.run();
  CHECK(written.size() == 6);
  for (int i = 0; i < 2; ++i) {
    auto m = h.arrived_message();
    REQUIRE(m);
    CHECK(type_of(*m) == wire::message_type::ack);
    h.channel->fill(m->tag, std::move(m->frame), m->acked);
  }
  CHECK(written.size() == 8);

  // A lone request the fsync group syncs (a sync is outstanding there, so
  // the writer hands it on): the group writes its ack, after its sync.
  load->handed_to_group(1);
  written_during_sync = 0;
  std::size_t syncs_seen = 0;
  h.io->during_sync = [&] {
    ++syncs_seen;
    written_during_sync += written.size() - 8;
  };
  send(true);
  h.run_writer();
  CHECK(written.size() == 8);  // waits at the group
  h.run();
  CHECK(syncs_seen == 1);
  CHECK(written_during_sync == 0);
  CHECK(written.size() == 9);
  CHECK_FALSE(h.arrived_message());
}

TEST_CASE("after a sync it ran itself with more waiting the writer leaves the replies to its idle fsync group",
          "[actor][ingest][durable]") {
  const bool sync_fails = GENERATE(false, true);
  CAPTURE(sync_fails);
  shared_load_harness both;
  auto& h = both.h;
  const auto& written = h.socket->writes;
  std::uint64_t next_tag = 0;
  auto send = [&](const std::string& payload) {
    ingest_request r;
    r.durable = true;
    r.body = bytes_of(payload);
    h.send(next_tag++, std::move(r));
  };
  const int before = h.io->syncs_done.load();
  if (sync_fails) h.io->fail_next_sync = EIO;
  send("written");
  h.step_writer();  // queued; its flush follows
  send("waiting");
  h.step_writer();  // the flush: written and synced here, with "waiting" in the mailbox
  CHECK(h.io->syncs_done.load() > before);  // a failed one also tries to seal the segment
  CHECK(written.empty());                   // the reply waits for the fsync group
  CHECK(both.load->outstanding() == 0);  // which is not syncing: the writer may sync again
  h.run_writer();  // "waiting" (a new segment after the failure): synced here, answered here
  CHECK(written.empty());  // behind the first reply, which is not written yet
  const int writer_syncs = h.io->syncs_done.load();
  h.run();  // the fsync group writes the first reply; the second follows it
  CHECK(h.io->syncs_done.load() == writer_syncs);  // it ran no sync of its own
  REQUIRE(written.size() == 2);
  CHECK(written[0].frame == (sync_fails ? wire::encode_nack(wire::nack_reason::internal_error) : wire::encode_ack()));
  CHECK(written[0].acked == (sync_fails ? 0u : 1u));
  CHECK(written[1].frame == wire::encode_ack());
  CHECK_FALSE(h.arrived_message());
}

TEST_CASE("a group with Replicated acks is answered by the writer after its own sync though more wait",
          "[actor][ingest][durable][cluster]") {
  shared_load_harness both;
  auto& h = both.h;
  auto send = [&](std::uint64_t tag, bool replicated) {
    ingest_request r;
    r.durable = true;
    r.replicated = replicated;
    r.body = bytes_of("replicated");
    h.send(tag, std::move(r));
  };
  const int before = h.io->syncs_done.load();
  send(1, true);
  h.step_writer();
  send(2, false);
  h.step_writer();  // the flush: synced here with request 2 waiting
  REQUIRE(h.io->syncs_done.load() == before + 1);
  // Answered on the writer's turn, not left to the fsync group: here, with
  // no replicator to hand it to, its answer is the refusal.
  auto r = h.arrived_reply();
  REQUIRE(r);
  CHECK(r->tag == 1);
  CHECK(is_internal_error_nack(*r));
  auto next = h.next_reply();
  REQUIRE(next);
  CHECK(next->tag == 2);
  CHECK(next->acked == 1);
}

TEST_CASE("with the append notice the writer messages the drain for a new segment and otherwise only when asked",
          "[actor][ingest][drain]") {
  auto notice = std::make_shared<append_notice>();
  std::optional<caf::scoped_actor> drain;  // the test plays the drain
  ingest_harness h({}, 1 << 20, 1ull << 30, [&](shard_writer_settings& ws, caf::actor_system& sys) {
    drain.emplace(sys);
    ws.drains.push_back({caf::actor_cast<segment_listener_actor>(*drain), notice});
  });
  struct let_go {  // the probe ends before the harness's actor system, which waits for it
    std::optional<caf::scoped_actor>& probe;
    ~let_go() { probe.reset(); }
  } let_go_of_drain{drain};
  auto messages = [&] {
    h.run();
    int n = 0;
    for (bool more = true; more;)
      (*drain)->receive([&](appended_atom, std::uint64_t, std::uint64_t) { ++n; },
                        caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
    return n;
  };
  CHECK(messages() == 1);  // the first segment
  notice->take();
  CHECK_FALSE(notice->wake_after(1 << 20, 1000));  // a lingering drain
  h.push(1, "durable", true);
  CHECK(messages() == 0);  // in the notice only
  h.push(2, "buffered", false);
  CHECK(messages() == 0);  // Buffered too
  CHECK(notice->take().end > wab::segment_prefix_size);
  CHECK_FALSE(notice->wake_after(0, 0));  // a drain that caught up
  h.push(3, "durable", true);
  CHECK(messages() == 1);
  const auto before = notice->take().end;
  CHECK_FALSE(notice->wake_after(0, 0));
  h.push(4, "buffered", false);
  CHECK(messages() == 1);
  CHECK(notice->take().end > before);
}
