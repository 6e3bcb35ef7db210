// The drain's protocol, driven directly: segments written with the real
// segment writer, `appended` announcements sent by hand, and the test acting
// as the sink runner, so that every interleaving of reads, confirms,
// rotations and deletions can be forced. Deterministic: the drain runs on
// CAF's test scheduler in this thread, and its linger and cursor timers fire
// only when a test moves the test clock.
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <catch2/catch.hpp>

#include "actors/drain.hpp"
#include "messages/drain_protocol.hpp"
#include "wire/coordinate.hpp"
#include "observability/metrics.hpp"
#include "wab/confirm_cursor.hpp"
#include "wab/segment_reader.hpp"
#include "wab/spare_pool.hpp"
#include "wab/segment_writer.hpp"
#include "support/faulty_file_io.hpp"
#include "support/test_scheduler.hpp"
#include "support/test_paths.hpp"

using namespace weir;
using namespace std::chrono_literals;

namespace {

byte_buffer bytes_of(const std::string& s) { return byte_buffer(s.begin(), s.end()); }

struct drain_harness : test::test_scheduler {
  test::temp_dir dir;
  std::filesystem::path shard_dir = dir / "shard_00";
  std::shared_ptr<test::faulty_file_io> io = std::make_shared<test::faulty_file_io>();
  std::shared_ptr<wab::wab_usage> usage = std::make_shared<wab::wab_usage>(1ull << 30);
  std::optional<caf::scoped_actor> runner;  // the test plays the sink runner
  drain_actor drain;
  std::map<std::uint64_t, std::shared_ptr<wab::segment_writer>> segments;

  drain_harness() {
    std::filesystem::create_directories(shard_dir);
    runner.emplace(sys());
  }
  ~drain_harness() {
    if (drain) caf::anon_send_exit(drain, caf::exit_reason::user_shutdown);
    run();
  }

  /// The daemon stops: the drain goes, and the segments written so far
  /// are an earlier run's for the next start().
  void end_run() {
    caf::anon_send_exit(drain, caf::exit_reason::user_shutdown);
    run();
    segments.clear();
    drain = nullptr;
  }

  /// Lets the cursor timer fire: a confirmed position is stored, and the
  /// segments behind it go.
  void persist() { advance(std::chrono::milliseconds(cursor_persist_ms)); }

  static constexpr std::uint32_t linger_ms = 5;
  std::uint32_t cursor_persist_ms = 200;  // set before start()
  std::shared_ptr<wab::spare_pool> spares;  // set before start()
  std::string quarantine_dir;              // set before start()
  std::shared_ptr<append_notice> notice;    // set before start(): write() then announces as the writer does
  std::uint32_t batch_max_records = 1000;  // set before start()
  shard_metrics* stats = nullptr;             // set before start()
  shard_delivery* progress = nullptr;         // set before start()
  std::map<std::uint64_t, std::uint64_t> recovered_records;  // set before start()
  std::set<std::uint64_t> damaged_at_startup;               // set before start()
  int messages = 0;                         // `appended` messages write() sent
  std::uint16_t node = 0;                   // set before start()
  std::int64_t ts_ns = 7;                   // the ingest time write() stamps

  void start(std::uint64_t first_live = 1) {
    drain_settings s;
    s.shard_dir = shard_dir.string();
    s.first_live_sequence = first_live;
    s.linger_ms = linger_ms;
    s.batch_max_records = batch_max_records;
    s.node = node;
    s.notice = notice;
    s.cursor_persist_ms = cursor_persist_ms;
    s.max_in_flight = 1;
    s.stats = stats;
    s.progress = progress;
    s.recovered_records = recovered_records;
    s.damaged_at_startup = damaged_at_startup;
    s.io = io;
    s.usage = usage;
    s.spares = spares;
    s.quarantine_dir = quarantine_dir;
    s.thread = actor_thread::scheduler;
    drain = spawn_drain(sys(), s, caf::actor_cast<batch_consumer_actor>(*runner));
    run();
  }

  /// Appends to segment `seq` (created on first use) and announces it, as
  /// the writer does: with a notice, by message only when the drain asked or
  /// the segment is new. `settle`: let the drain handle it now.
  void write(std::uint64_t seq, const std::vector<std::string>& payloads, bool announce = true, bool settle = true) {
    auto& seg = segments[seq];
    const bool created = !seg;
    if (!seg) {
      auto created = wab::segment_writer::create(io, shard_dir.string(), 0, seq, 1);
      REQUIRE(created);
      seg = std::move(created).value();
      usage->add(seg->size());
    }
    std::vector<byte_buffer> owned;
    std::vector<byte_span> spans;
    for (const auto& p : payloads) owned.push_back(bytes_of(p));
    for (const auto& o : owned) spans.emplace_back(o);
    const auto before = seg->size();
    if (!payloads.empty()) REQUIRE(seg->append(spans, ts_ns).error == 0);
    usage->add(seg->size() - before);
    const bool wanted = !notice || notice->publish(seq, seg->size(), payloads.size());
    if (announce && (wanted || created)) {
      caf::anon_send(drain, appended_atom::value, seq, seg->size());
      ++messages;
    }
    if (settle) run();
  }

  /// The writer's rotation: `seq` takes no more records.
  void seal(std::uint64_t seq, bool settle = true) {
    if (notice) notice->retire(seq);
    caf::anon_send(drain, sealed_atom::value, seq, segments.at(seq)->size());
    if (settle) run();
  }

  /// A batch the drain has already sent, without moving the clock.
  std::optional<delivery_batch> batch_now() {
    std::optional<delivery_batch> out;
    (*runner)->receive([&](delivery_batch& b) { out = std::move(b); }, caf::after(std::chrono::seconds(0)) >> [] {});
    return out;
  }

  /// The next batch the drain sends, waiting out its linger (on the test clock).
  std::optional<delivery_batch> next_batch() {
    std::optional<delivery_batch> out;
    for (int turn = 0; turn < 2 && !out; ++turn) {
      if (turn > 0) advance(std::chrono::milliseconds(linger_ms));
      (*runner)->receive([&](delivery_batch& b) { out = std::move(b); }, caf::after(std::chrono::seconds(0)) >> [] {});
    }
    return out;
  }

  /// The runner's answer: `b` is delivered, and a copy of its records comes
  /// back for the drain to refill (or `spent`, when given).
  void confirm(const delivery_batch& b, std::shared_ptr<std::vector<sink_record>> spent = nullptr) {
    if (!spent) spent = std::make_shared<std::vector<sink_record>>(b.records);
    (*runner)->send(drain, delivered_atom::value, b.id, spent_batch{std::move(spent)});
    run();
  }

  struct expected_record {
    std::uint64_t seq;
    std::uint64_t index;
    std::string payload;
    std::int64_t ts_ns = 7;
  };

  /// Checks every field a read fills against what the segments hold.
  void check_read_fields(const delivery_batch& b, const std::vector<expected_record>& expected) {
    REQUIRE(b.records.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const auto& r = b.records[i];
      const auto& e = expected[i];
      const std::string segment = "shard_00/" + wab::segment_file_name(e.seq);
      CHECK(std::string(r.payload.begin(), r.payload.end()) == e.payload);
      CHECK(r.segment == segment);
      CHECK(r.sequence == e.seq);
      CHECK(r.index == e.index);
      CHECK(r.ts_ns == e.ts_ns);
      CHECK(r.node == node);
      CHECK(r.shard == 0);
      CHECK(r.id == wire::to_hex(wire::compute_record_id(segment, e.index, bytes_of(e.payload))));
    }
  }

  std::vector<std::string> payloads(const delivery_batch& b) {
    std::vector<std::string> out;
    for (const auto& r : b.records) out.emplace_back(r.payload.begin(), r.payload.end());
    return out;
  }

  bool exists(std::uint64_t seq) { return std::filesystem::exists(shard_dir / wab::segment_file_name(seq)); }

  /// Confirms batch after batch until none comes; the payloads, in order.
  std::vector<std::string> deliver_all() {
    std::vector<std::string> got;
    while (auto b = next_batch()) {
      for (auto& p : payloads(*b)) got.push_back(p);
      confirm(*b);
    }
    return got;
  }
};

}  // namespace

TEST_CASE("drain: records go out in order with their ids and the cursor follows and confirmed segments go",
          "[actor][drain]") {
  drain_harness h;
  h.start();
  h.write(1, {"a", "b"});
  auto b1 = h.next_batch();
  REQUIRE(b1);
  CHECK(h.payloads(*b1) == std::vector<std::string>{"a", "b"});
  CHECK(b1->records[1].segment == "shard_00/seg_00000001.wab");
  CHECK(b1->records[1].index == 2);
  CHECK(b1->records[1].id == wire::to_hex(wire::compute_record_id("shard_00/seg_00000001.wab", 2, bytes_of("b"))));
  CHECK(b1->records[1].ts_ns == 7);
  h.write(2, {"c"});  // rotation: segment 1 is closed now
  CHECK_FALSE(h.next_batch());  // one batch in flight at most
  h.confirm(*b1);
  auto b2 = h.next_batch();
  REQUIRE(b2);
  CHECK(h.payloads(*b2) == std::vector<std::string>{"c"});
  h.persist();
  CHECK_FALSE(h.exists(1));  // wholly confirmed and closed
  CHECK(h.exists(2));
  const auto cursor = wab::load_cursor(*h.io, h.shard_dir.string());
  REQUIRE(cursor);
  CHECK(cursor->sequence == 2);
}

TEST_CASE("drain: records handed back after delivery are refilled whole for the next batches", "[actor][drain]") {
  drain_harness h;
  h.batch_max_records = 3;
  h.node = 4;
  h.start();
  const std::string long_payload(300, 'L');
  h.write(1, {long_payload, "second record", "third"});
  auto b1 = h.next_batch();
  REQUIRE(b1);
  h.check_read_fields(*b1, {{1, 1, long_payload}, {1, 2, "second record"}, {1, 3, "third"}});
  // Shorter payloads, later ingest times, a later segment and higher
  // indexes: nothing of the records they are refilled from may show through.
  h.ts_ns = 9;
  h.write(1, {"x", "zz"});
  h.write(2, {"y", "w"});
  h.confirm(*b1);
  auto b2 = h.next_batch();
  REQUIRE(b2);
  h.check_read_fields(*b2, {{1, 4, "x", 9}, {1, 5, "zz", 9}, {2, 1, "y", 9}});
  h.confirm(*b2);
  auto b3 = h.next_batch();
  REQUIRE(b3);
  h.check_read_fields(*b3, {{2, 2, "w", 9}});
}

TEST_CASE("drain: records still shared when handed back are left alone", "[actor][drain]") {
  drain_harness h;
  h.start();
  h.write(1, {"kept by someone else"});
  auto b1 = h.next_batch();
  REQUIRE(b1);
  auto spent = std::make_shared<std::vector<sink_record>>(b1->records);
  const auto still_held = spent;  // as if a worker had not yet let go of its message
  h.write(1, {"next"});
  h.confirm(*b1, spent);
  auto b2 = h.next_batch();
  REQUIRE(b2);
  h.check_read_fields(*b2, {{1, 2, "next"}});
  REQUIRE(still_held->size() == 1);
  CHECK(std::string(still_held->front().payload.begin(), still_held->front().payload.end()) == "kept by someone else");
  CHECK(still_held->front().index == 1);
}

TEST_CASE("drain: caught up at a segment's end it keeps reading after the cursor steps past it",
          "[actor][drain]") {
  drain_harness h;
  h.start();
  h.write(1, {"only"});
  auto b1 = h.next_batch();
  REQUIRE(b1);
  h.write(2, {}, true);  // the writer rotated: segment 2 exists, empty
  h.confirm(*b1);  // the cursor moves to segment 2, segment 1 is deleted
  h.persist();
  CHECK_FALSE(h.exists(1));
  h.write(2, {"later"});
  auto b2 = h.next_batch();
  REQUIRE(b2);  // reading followed the cursor: nothing stalls
  CHECK(h.payloads(*b2) == std::vector<std::string>{"later"});
}

TEST_CASE("drain: a restart resumes at the confirm cursor and delivers only what was not confirmed",
          "[actor][drain]") {
  drain_harness h;
  h.start();
  h.write(1, {"r1", "r2"});
  auto b1 = h.next_batch();
  REQUIRE(b1);
  h.confirm(*b1);
  h.persist();
  REQUIRE(wab::load_cursor(*h.io, h.shard_dir.string()).has_value());
  h.write(1, {"r3"});
  auto b2 = h.next_batch();
  REQUIRE(b2);  // delivered but never confirmed: it must come again
  h.end_run();  // its segments are an earlier run's now
  h.start(2);
  auto again = h.next_batch();
  REQUIRE(again);
  CHECK(h.payloads(*again) == std::vector<std::string>{"r3"});
}

TEST_CASE("drain: the stored cursor trails delivery by at most drain.cursor_persist_ms", "[actor][drain]") {
  drain_harness h;
  h.cursor_persist_ms = 50;
  h.start();
  // At 0 ms the first segment is announced: the cursor moves onto it, and
  // the timer that stores it is set for 50 ms.
  h.write(1, {"a", "b"});
  auto b = h.next_batch();  // at 5 ms, after the linger
  REQUIRE(b);
  h.confirm(*b);  // nothing can be deleted yet, so nothing is stored at once
  auto stored_index = [&] {
    const auto c = wab::load_cursor(*h.io, h.shard_dir.string());
    return c ? c->index : 0;
  };
  h.advance(44ms);  // 49 ms
  CHECK(stored_index() == 0);
  h.advance(1ms);  // 50 ms: one store for every move since
  CHECK(stored_index() == 3);  // the next record to confirm is the third
}

TEST_CASE("drain: a sealed segment is checked as it is read and a damaged record is quarantined while the rest is delivered",
          "[actor][drain][wab]") {
  drain_harness h;
  h.quarantine_dir = (h.dir / "quarantine").string();
  std::filesystem::create_directories(h.quarantine_dir);
  // An earlier run's segment, sealed: recovery trusts it without reading it.
  h.write(1, {"alpha", "bravo", "charlie"}, false);
  REQUIRE(h.segments[1]->seal() == 0);
  const auto file = h.shard_dir / wab::segment_file_name(1);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(wab::segment_prefix_size + wab::record_header_size + 5 + wab::record_header_size));
    f.put('X');  // a payload byte of "bravo"
  }
  shard_metrics stats;
  shard_delivery progress;
  h.stats = &stats;
  h.progress = &progress;
  h.recovered_records = {{1, 3}};  // what startup recovery counted (the seal's count)
  h.start(2);
  auto b = h.next_batch();
  REQUIRE(b);
  CHECK(h.payloads(*b) == std::vector<std::string>{"alpha", "charlie"});
  CHECK(b->records[1].index == 3);  // the damaged record costs its index, the others keep theirs
  CHECK(std::filesystem::exists(std::filesystem::path(h.quarantine_dir) / "shard_00__seg_00000001.wab"));
  // Once the rest is confirmed nothing is waiting: the lost record is not lag.
  CHECK(stats.lost.load() == 1);
  h.confirm(*b);
  CHECK(progress.lost.load() == 1);
  CHECK(progress.lag(stats.appended.load()) == 0);
}

TEST_CASE("drain: a damaged stretch of two records in a sealed segment counts both as lost", "[actor][drain][wab]") {
  // The stretch costs one index; the seal says how many records there were.
  drain_harness h;
  h.write(1, {"alpha", "bravo", "charlie", "delta"}, false);
  REQUIRE(h.segments[1]->seal() == 0);
  {
    std::fstream f(h.shard_dir / wab::segment_file_name(1), std::ios::in | std::ios::out | std::ios::binary);
    const auto bravo = wab::segment_prefix_size + wab::record_header_size + 5;
    f.seekp(static_cast<std::streamoff>(bravo + wab::record_header_size));
    f.put('X');  // "bravo"
    f.seekp(static_cast<std::streamoff>(bravo + wab::record_header_size + 5 + wab::record_header_size));
    f.put('X');  // "charlie"
  }
  shard_metrics stats;
  shard_delivery progress;
  h.stats = &stats;
  h.progress = &progress;
  h.recovered_records = {{1, 4}};
  h.start(2);
  h.write(2, {"later"});
  CHECK(h.deliver_all() == std::vector<std::string>{"alpha", "delta", "later"});
  CHECK(stats.lost.load() == 2);
  CHECK(progress.lag(stats.appended.load()) == 0);
}

TEST_CASE("drain: a delivered segment is kept as a spare while the pool wants one and deleted otherwise", "[actor][drain][wab]") {
  drain_harness h;
  h.spares = std::make_shared<wab::spare_pool>(h.io, h.shard_dir.string(), 1, 1, 0);
  h.start();
  h.write(1, {"a"});
  h.write(2, {"b"});
  h.write(3, {"c"});
  CHECK(h.deliver_all().size() == 3);
  h.persist();
  CHECK_FALSE(h.exists(1));
  CHECK_FALSE(h.exists(2));
  CHECK(h.spares->held() == 1);  // one of them, renamed; the other deleted
  std::size_t spare_files = 0;
  for (const auto& e : std::filesystem::directory_iterator(h.shard_dir))
    spare_files += wab::parse_spare_file_name(e.path().filename().string()) ? 1 : 0;
  CHECK(spare_files == 1);
}

TEST_CASE("drain: a segment it cannot read is retried and never taken for empty", "[actor][drain][faults]") {
  drain_harness h;
  h.start();
  h.io->fail_reads = EIO;  // the disk fails reads for a while
  h.write(1, {"a", "b"});
  h.write(2, {"c"});       // segment 1 is closed now
  CHECK_FALSE(h.next_batch());
  h.persist();
  h.persist();
  CHECK(h.exists(1));  // not delivered, so never deleted
  h.io->fail_reads = 0;
  h.persist();         // the retry reads it
  CHECK(h.deliver_all() == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("drain: a segment it cannot open is retried on the timer and not on every append", "[actor][drain][faults]") {
  drain_harness h;
  h.start();
  h.io->fail_opens = EMFILE;  // out of file descriptors
  h.write(1, {"a"});
  const int first = h.io->opens.load();
  CHECK(first >= 1);
  for (int i = 0; i < 20; ++i) h.write(1, {"more"});  // the writer goes on appending
  CHECK(h.io->opens.load() == first);  // no open per announcement
  CHECK_FALSE(h.next_batch());
  h.persist();  // the timer tries again
  CHECK(h.io->opens.load() == first + 1);
  h.io->fail_opens = 0;
  h.persist();
  CHECK(h.deliver_all().size() == 21);
}

TEST_CASE("drain: a confirm cursor past segments it never confirmed deletes nothing and the shard is delivered whole",
          "[actor][drain][wab]") {
  drain_harness h;
  h.start();
  h.write(1, {"a", "b"});
  h.write(2, {"c"});
  h.write(3, {"d", "e"});
  h.end_run();  // its segments are an earlier run's now
  // A cursor file that checks but names segment 100: written by hand, copied
  // from another shard, or lying. Trusted, it would delete all three.
  wab::confirm_cursor lie;
  lie.sequence = 100;
  lie.offset = wab::segment_prefix_size;
  REQUIRE(wab::store_cursor(*h.io, h.shard_dir.string(), lie) == 0);
  h.start(101);
  h.persist();
  CHECK(h.exists(1));
  CHECK(h.exists(2));
  CHECK(h.exists(3));
  CHECK(h.deliver_all() == std::vector<std::string>{"a", "b", "c", "d", "e"});
  // A true cursor is still taken: at segment 4, the one after the last.
  h.persist();
  const auto stored = wab::load_cursor(*h.io, h.shard_dir.string());
  REQUIRE(stored);
  CHECK(stored->sequence == 4);
}

TEST_CASE("drain: a confirm cursor that names no record of its segment is not trusted", "[actor][drain][wab]") {
  struct lie {
    const char* what;
    std::uint64_t offset, index;
  };
  for (const auto& l : {lie{"an offset past the segment's end", 1000000000000ull, 1},
                        lie{"an offset inside a record", wab::segment_prefix_size + 3, 2},
                        lie{"a record's offset with another index", 0, 7},
                        lie{"an index of 2^64 - 1", wab::segment_prefix_size, ~0ull}}) {
    INFO(l.what);
    drain_harness h;
    h.start();
    h.write(1, {"a", "b"});
    h.write(2, {"c", "d", "e"});
    h.end_run();  // its segments are an earlier run's now
    wab::confirm_cursor c;
    c.sequence = 2;
    c.offset = l.offset;
    c.index = l.index;
    if (c.offset == 0) {  // the second record's offset, with another index
      const auto records = wab::read_segment_extent(*h.io, (h.shard_dir / wab::segment_file_name(2)).string());
      REQUIRE(records);
      c.offset = records.value().start + wab::record_header_size + 1;  // "c" is one byte: record 2 starts here
    }
    REQUIRE(wab::store_cursor(*h.io, h.shard_dir.string(), c) == 0);
    h.start(3);
    CHECK(h.deliver_all() == std::vector<std::string>{"a", "b", "c", "d", "e"});
  }
}

TEST_CASE("drain: a cursor moved onto the start of a segment (no record offset yet) is trusted", "[actor][drain][wab]") {
  drain_harness h;
  h.start();
  h.write(1, {"a", "b"});
  h.write(2, {"c", "d"});
  h.end_run();  // its segments are an earlier run's now
  // What the drain stores when a segment is done: the next one, at its start,
  // with the default offset (before a version-2 segment's first record).
  wab::confirm_cursor next;
  next.sequence = 2;
  REQUIRE(next.offset < wab::segment_prefix_size);
  REQUIRE(wab::store_cursor(*h.io, h.shard_dir.string(), next) == 0);
  h.start(3);
  h.persist();
  CHECK_FALSE(h.exists(1));  // delivered before the stop: deleted now
  CHECK(h.deliver_all() == std::vector<std::string>{"c", "d"});  // and not delivered again
}

TEST_CASE("drain: a cursor just past the last segment (the crash between storing it and deleting) is trusted",
          "[actor][drain][wab]") {
  drain_harness h;
  h.start();
  h.write(1, {"a"});
  h.write(2, {"b"});
  h.end_run();  // its segments are an earlier run's now
  wab::confirm_cursor done;
  done.sequence = 3;
  done.offset = wab::segment_prefix_size;
  REQUIRE(wab::store_cursor(*h.io, h.shard_dir.string(), done) == 0);
  h.start(3);
  h.persist();
  CHECK_FALSE(h.exists(1));  // delivered before the crash: deleted now
  CHECK_FALSE(h.exists(2));
  CHECK_FALSE(h.next_batch());
}

TEST_CASE("drain: segments an earlier run left that it cannot list or open at start are waited for and never stepped over",
          "[actor][drain][faults]") {
  for (const bool listing : {true, false}) {
    INFO((listing ? "the directory cannot be listed" : "a segment cannot be opened"));
    drain_harness h;
    h.start();
    h.write(1, {"a"});
    h.write(2, {"b", "c"});
    h.end_run();  // its segments are an earlier run's now
    if (listing) h.io->fail_lists = EMFILE;
    else h.io->fail_opens = EIO;
    h.start(3);
    h.io->fail_opens = 0;  // the writer's own segment opens (the drain reads it only after 1 and 2)
    if (!listing) h.io->fail_opens = EIO;
    h.write(3, {"d"});
    CHECK_FALSE(h.next_batch());
    h.persist();
    h.persist();
    CHECK_FALSE(h.next_batch());
    CHECK_FALSE(wab::load_cursor(*h.io, h.shard_dir.string()).has_value());  // not moved past them
    CHECK(h.exists(1));
    CHECK(h.exists(2));
    h.io->fail_lists = 0;
    h.io->fail_opens = 0;
    h.persist();  // the retry finds them
    CHECK(h.deliver_all() == std::vector<std::string>{"a", "b", "c", "d"});
  }
}

TEST_CASE("drain: a sealed segment whose last records stop checking is damage and quarantined", "[actor][drain][wab]") {
  drain_harness h;
  h.quarantine_dir = (h.dir / "quarantine").string();
  std::filesystem::create_directories(h.quarantine_dir);
  h.write(1, {"alpha", "bravo"}, false);
  REQUIRE(h.segments[1]->seal() == 0);
  {
    std::fstream f(h.shard_dir / wab::segment_file_name(1), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(wab::segment_prefix_size + 2 * wab::record_header_size + 5));
    f.put('X');  // a payload byte of "bravo", the last record: nothing good follows it
  }
  shard_metrics stats;
  h.stats = &stats;
  h.start(2);
  auto b = h.next_batch();
  REQUIRE(b);
  CHECK(h.payloads(*b) == std::vector<std::string>{"alpha"});
  CHECK(std::filesystem::exists(std::filesystem::path(h.quarantine_dir) / "shard_00__seg_00000001.wab"));
  h.confirm(*b);
  h.write(2, {"later"});  // the writer's segment: the drain moves on past the damaged one
  CHECK(h.deliver_all() == std::vector<std::string>{"later"});
  // Counted (and reported) once, though the next read meets the same tail;
  // the seal says how many records it held.
  CHECK(stats.lost.load() == 1);
  CHECK(stats.quarantined_segments.load() == 1);
}

TEST_CASE("drain: damage startup recovery already reported is not copied or counted again", "[actor][drain][wab]") {
  drain_harness h;
  h.quarantine_dir = (h.dir / "quarantine").string();
  std::filesystem::create_directories(h.quarantine_dir);
  h.write(1, {"alpha", "bravo", "charlie"}, false);
  REQUIRE(h.segments[1]->seal() == 0);
  {
    std::fstream f(h.shard_dir / wab::segment_file_name(1), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(wab::segment_prefix_size + wab::record_header_size + 5 + wab::record_header_size));
    f.put('X');  // a payload byte of "bravo"
  }
  h.damaged_at_startup = {1};
  shard_metrics stats;
  h.stats = &stats;
  h.start(2);
  auto b = h.next_batch();
  REQUIRE(b);
  CHECK(h.payloads(*b) == std::vector<std::string>{"alpha", "charlie"});
  CHECK(std::filesystem::is_empty(h.quarantine_dir));
  CHECK(stats.lost.load() == 0);  // recovery's count of the segment left it out already
}

TEST_CASE("drain: with the append notice a lingering batch takes the writes made meanwhile without a message for each",
          "[actor][drain]") {
  drain_harness h;
  h.notice = std::make_shared<append_notice>();
  h.start();
  h.write(1, {"a"});  // a new segment: announced by message
  h.write(1, {"b"});
  h.write(1, {"c"});
  CHECK(h.messages == 1);
  CHECK_FALSE(h.batch_now());  // the batch lingers
  auto b = h.next_batch();
  REQUIRE(b);
  CHECK(h.payloads(*b) == std::vector<std::string>{"a", "b", "c"});
  h.confirm(*b);
  h.write(1, {"d"});  // caught up: the drain asked for the next write
  CHECK(h.messages == 2);
  auto b2 = h.next_batch();
  REQUIRE(b2);
  CHECK(h.payloads(*b2) == std::vector<std::string>{"d"});
}

TEST_CASE("drain: with the append notice writes that could fill the lingering batch wake it before its linger ends",
          "[actor][drain]") {
  drain_harness h;
  h.notice = std::make_shared<append_notice>();
  h.batch_max_records = 3;
  h.start();
  h.write(1, {"a"});
  h.write(1, {"b"});
  CHECK(h.messages == 1);
  h.write(1, {"c"});  // two since the drain looked: the batch's room
  CHECK(h.messages == 2);
  auto b = h.batch_now();
  REQUIRE(b);
  CHECK(h.payloads(*b) == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("drain: a segment the append notice names before its message is read only after the segments before it",
          "[actor][drain]") {
  drain_harness h;
  h.notice = std::make_shared<append_notice>();
  h.start();
  h.write(1, {"a"});  // the drain knows segment 1 and lingers
  // The writer runs ahead while the drain waits: segment 1 gets more and is
  // sealed, segment 2 comes and goes, segment 3 is written to. The notice
  // names segment 3 before the drain has read the messages for 2.
  h.write(1, {"a2"}, true, false);
  h.seal(1, false);
  h.write(2, {"b"}, true, false);
  h.seal(2, false);
  h.write(3, {"c"}, true, false);
  h.write(3, {"d"}, true, false);
  std::vector<std::string> seen;
  for (int i = 0; i < 4 && seen.size() < 5; ++i) {
    auto b = h.next_batch();
    if (!b) continue;
    for (auto& p : h.payloads(*b)) seen.push_back(p);
    h.confirm(*b);
  }
  CHECK(seen == std::vector<std::string>{"a", "a2", "b", "c", "d"});
  h.persist();
  CHECK_FALSE(h.exists(1));
  CHECK_FALSE(h.exists(2));
}

TEST_CASE("drain: with the append notice writes made while the in-flight limit is full need no message and go once a batch is confirmed",
          "[actor][drain]") {
  drain_harness h;
  h.notice = std::make_shared<append_notice>();
  h.start();
  h.write(1, {});  // the writer announces a new segment before its first record
  h.write(1, {"a"});
  auto b1 = h.next_batch();
  REQUIRE(b1);  // one batch in flight: the limit
  const int before = h.messages;
  h.write(1, {"b"});
  h.write(1, {"c"});
  CHECK(h.messages == before);  // the drain asked for nothing while full
  CHECK_FALSE(h.next_batch());
  h.confirm(*b1);
  auto b2 = h.next_batch();
  REQUIRE(b2);
  CHECK(h.payloads(*b2) == std::vector<std::string>{"b", "c"});
}
