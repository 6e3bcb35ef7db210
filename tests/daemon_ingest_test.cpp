// Durable ingest against the real weir-server over its socket: every tier,
// tracked pushes, batches (including a batch the disk cuts short), strict and
// ordered pipelining, many connections over several shards, and a graceful
// shutdown that answers what is in flight. What was acked is then read back
// from the WAB files themselves.
#include <signal.h>

#include <map>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include "wire/batch.hpp"
#include "wire/coordinate.hpp"
#include "wire/frame.hpp"
#include "support/daemon_process.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "support/wab_contents.hpp"
#include "support/wire_peer.hpp"
#include "weir/client.hpp"

using namespace weir;
using namespace weir::test;
using weir::client::durability;

namespace {

/// Every payload in the WAB, with where it is.
std::map<std::string, wab_record> wab_by_payload(const std::filesystem::path& data_dir) {
  std::map<std::string, wab_record> out;
  for (const auto& shard : all_shard_records(data_dir))
    for (const auto& r : shard) out[r.payload] = r;
  return out;
}

byte_buffer push_frame(wire::message_type type, std::uint8_t durability_byte, const std::string& payload) {
  return wire::encode_frame(type, static_cast<wire::durability>(durability_byte),
                            byte_buffer(payload.begin(), payload.end()));
}

/// Daemon arguments under which every record stays in the WAB to be read
/// back: the sink cannot be reached, so no segment is delivered and deleted
/// (the writer moves onto a spare soon after start, closing its first one).
std::vector<std::string> kept_in_wab(std::vector<std::string> more = {}) {
  std::vector<std::string> args{"--set", "sink.type=http", "--set", "sink.http.url=http://127.0.0.1:1/"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

}  // namespace

TEST_CASE("live: every durability byte is answered and acked records are in the WAB", "[live][ingest]") {
  temp_dir dir;
  daemon_process d(dir.path(), kept_in_wab());
  REQUIRE(d.wait_ready());
  wire_peer peer(d.socket_path());
  byte_buffer stream;
  for (auto [byte, name] : std::vector<std::pair<std::uint8_t, std::string>>{
           {0x01, "durable"}, {0x02, "batched-means-durable"}, {0x03, "buffered"}, {0x04, "replicated"}})
    for (auto f : push_frame(wire::message_type::push, byte, "tier " + name)) stream.push_back(f);
  REQUIRE(peer.send(stream));
  auto got = peer.collect_frames(4);
  REQUIRE(got.replies.size() == 4);
  CHECK(reply_type(got.replies[0]) == 0x02);
  CHECK(reply_type(got.replies[1]) == 0x02);
  CHECK(reply_type(got.replies[2]) == 0x02);
  // Replicated needs a cluster; a single node cannot promise it.
  CHECK(reply_type(got.replies[3]) == 0x03);
  CHECK(nack_reason(got.replies[3]) == 0x06);
  CHECK_FALSE(got.closed);
  REQUIRE(d.stop() == 0);
  const auto wab = wab_by_payload(dir / "var");
  CHECK(wab.count("tier durable"));
  CHECK(wab.count("tier batched-means-durable"));
  CHECK(wab.count("tier buffered"));
  CHECK_FALSE(wab.count("tier replicated"));
}

TEST_CASE("live: AckTracked names the record's segment and index and its id", "[live][ingest][tracked]") {
  temp_dir dir;
  daemon_process d(dir.path(), kept_in_wab());
  REQUIRE(d.wait_ready());
  std::vector<client::tracked_result> acks;
  {
    auto c = client::connection::connect_unix(d.socket_path());
    for (int i = 0; i < 5; ++i) {
      const std::string p = "tracked " + std::to_string(i);
      acks.push_back(c.push_tracked(as_bytes(p), i % 2 ? durability::buffered : durability::durable));
      REQUIRE(acks.back().acked);
    }
  }
  REQUIRE(d.stop() == 0);
  const auto wab = wab_by_payload(dir / "var");
  for (int i = 0; i < 5; ++i) {
    const std::string p = "tracked " + std::to_string(i);
    REQUIRE(wab.count(p));
    CHECK(acks[i].segment == wab.at(p).segment);
    CHECK(acks[i].index == wab.at(p).index);
    CHECK(acks[i].record_id_hex ==
          wire::to_hex(wire::compute_record_id(acks[i].segment, acks[i].index, as_bytes(p))));
    // One connection, one shard, in order (a new segment starts at 1: the
    // writer moves onto a spare once one is ready).
    if (i > 0) CHECK(acks[i].index == (acks[i].segment == acks[i - 1].segment ? acks[i - 1].index + 1 : 1));
  }
}

TEST_CASE("live: a batch is acked record by record and written in order", "[live][ingest][batch]") {
  temp_dir dir;
  daemon_process d(dir.path(), kept_in_wab());
  REQUIRE(d.wait_ready());
  std::vector<std::string> records;
  for (int i = 0; i < 100; ++i) records.push_back("batched " + std::to_string(i));
  {
    auto c = client::connection::connect_unix(d.socket_path());
    auto durable = c.push_batch(spans_of(records), durability::durable);
    CHECK(durable.all_accepted());
    CHECK(durable.accepted.size() == 100);
    auto buffered = c.push_batch(spans_of({"b1", "b2", "b3"}), durability::buffered);
    CHECK(buffered.all_accepted());
  }
  REQUIRE(d.stop() == 0);
  std::vector<std::string> on_disk;
  for (const auto& shard : all_shard_records(dir / "var"))
    for (const auto& r : shard) on_disk.push_back(r.payload);
  records.insert(records.end(), {"b1", "b2", "b3"});
  CHECK(on_disk == records);
}

TEST_CASE("live: a batch the disk cuts short gets the asymmetric bitmap and the shard goes on",
          "[live][ingest][batch][faults]") {
  // The daemon runs under a 64 KiB file size limit (ulimit -f), which also
  // keeps it from preparing spare segments: this segment grows as it is
  // written. After its 64-byte header it is filled to 480 bytes below the
  // limit (64 records of 16 + 1000 bytes, the first 32 bytes shorter); a
  // batch of nine 100-byte records (116 bytes each on disk) then has four
  // records land whole before the kernel refuses the rest of the write.
  temp_dir dir;
  daemon_process d(dir.path(), {"--set", "ingest.shards=1"}, {}, 64 * 1024);
  REQUIRE(d.wait_ready());
  auto c = client::connection::connect_unix(d.socket_path());
  c.set_timeout(std::chrono::seconds(10));
  const std::string filler(1000, 'f');
  REQUIRE(c.push(as_bytes(filler.substr(32)), durability::durable).acked);
  for (int i = 1; i < 64; ++i) REQUIRE(c.push(as_bytes(filler), durability::durable).acked);
  std::vector<std::string> nine;
  for (int i = 0; i < 9; ++i) nine.push_back(std::string(99, 'a' + i) + "!");
  auto r = c.push_batch(spans_of(nine), durability::durable);
  REQUIRE_FALSE(r.nack);
  CHECK(r.accepted == std::vector<bool>{true, true, true, true, false, false, false, false, false});
  // The same bitmap on the wire: 0x0f 0x00.
  const auto raw = wire::encode_ack_batch(r.accepted);
  CHECK(raw[wire::header_size + 3] == 0x0f);
  CHECK(raw[wire::header_size + 4] == 0x00);
  auto after = c.push_tracked(as_bytes("after the short write"), durability::durable);
  REQUIRE(after.acked);
  CHECK(after.segment == "shard_00/seg_00000002.wab");
  CHECK(d.log().find("WAB write failed") != std::string::npos);
  REQUIRE(d.stop() == 0);
  const auto wab = wab_by_payload(dir / "var");
  for (int i = 0; i < 9; ++i) CHECK(wab.count(nine[i]) == (i < 4 ? 1u : 0u));
  CHECK(wab.count("after the short write"));
}

TEST_CASE("live: strict and ordered modes answer a pipelined stream in order", "[live][ingest][modes]") {
  const std::string reads = GENERATE(as<std::string>{}, "off", "always");  // runtime.read_batching
  INFO("runtime.read_batching " << reads);
  for (std::string mode : {"strict", "ordered"}) {
    temp_dir dir;
    daemon_process d(dir.path(), {"--set", "ingest.ack_mode=" + mode, "--set", "ingest.max_inflight=8", "--set",
                                  "runtime.read_batching=" + reads});
    REQUIRE(d.wait_ready());
    wire_peer peer(d.socket_path());
    byte_buffer stream;
    for (int i = 0; i < 200; ++i) {
      auto f = push_frame(wire::message_type::push_tracked, i % 3 == 2 ? 0x03 : 0x01, mode + " " + std::to_string(i));
      stream.insert(stream.end(), f.begin(), f.end());
    }
    REQUIRE(peer.send(stream));
    auto got = peer.collect_frames(200, std::chrono::seconds(20));
    REQUIRE(got.replies.size() == 200);
    // In submission order: indices follow each other within a segment, and
    // a later segment (the writer moves onto a spare once one is ready)
    // starts again at 1.
    std::uint64_t last = 0;
    std::string segment;
    for (const auto& f : got.replies) {
      REQUIRE(reply_type(f) == 0x07);
      auto c = wire::decode_coordinate(byte_span(f.data() + wire::header_size, f.size() - wire::header_size - 4));
      REQUIRE(c);
      if (c.value().segment != segment) {
        CHECK(c.value().segment > segment);
        CHECK(c.value().index == 1);
      } else {
        CHECK(c.value().index == last + 1);
      }
      last = c.value().index;
      segment = c.value().segment;
    }
    REQUIRE(d.stop() == 0);
  }
}

TEST_CASE("live: a producer that half-closes after a pipelined stream gets every reply before the close",
          "[live][ingest][modes]") {
  const std::string reads = GENERATE(as<std::string>{}, "off", "always");  // runtime.read_batching
  INFO("runtime.read_batching " << reads);
  for (std::string mode : {"strict", "ordered"}) {
    INFO("mode " << mode);
    temp_dir dir;
    daemon_process d(dir.path(), {"--set", "ingest.ack_mode=" + mode, "--set", "ingest.max_inflight=4", "--set",
                                  "runtime.read_batching=" + reads});
    REQUIRE(d.wait_ready());
    wire_peer peer(d.socket_path());
    byte_buffer stream;
    for (int i = 0; i < 100; ++i) {
      auto f = push_frame(wire::message_type::push, 0x01, mode + " " + std::to_string(i));
      stream.insert(stream.end(), f.begin(), f.end());
    }
    REQUIRE(peer.send(stream));
    peer.half_close();  // end of input reaches the daemon long before most replies are owed
    auto got = peer.collect(std::chrono::seconds(10));
    CHECK(got.closed);
    REQUIRE(got.replies.size() == 100);
    std::size_t acks = 0;
    for (const auto& f : got.replies) acks += reply_type(f) == 0x02;
    CHECK(acks == 100);
    REQUIRE(d.stop() == 0);
  }
}

TEST_CASE("live: replies stay whole and in order when the peer reads them late", "[live][ingest][modes]") {
  // Thousands of tracked replies while the peer is still sending: the
  // socket's buffer fills, replies are sent part now and part later, and
  // later ones must queue behind what is already waiting; reading pauses
  // while they do, and resumes.
  const std::string reads = GENERATE(as<std::string>{}, "off", "always");  // runtime.read_batching
  INFO("runtime.read_batching " << reads);
  temp_dir dir;
  daemon_process d(dir.path(), kept_in_wab({"--set", "ingest.ack_mode=ordered", "--set", "ingest.max_inflight=256",
                                            "--set", "runtime.read_batching=" + reads}));
  REQUIRE(d.wait_ready());
  wire_peer peer(d.socket_path());
  constexpr int frames = 6000;
  byte_buffer stream;
  for (int i = 0; i < frames; ++i) {
    auto f = push_frame(wire::message_type::push_tracked, 0x03, "late reader " + std::to_string(i));
    stream.insert(stream.end(), f.begin(), f.end());
  }
  std::thread sender([&] { CHECK(peer.send(stream)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // not reading: let the replies pile up
  auto got = peer.collect_frames(frames, std::chrono::seconds(30));
  sender.join();
  REQUIRE(got.replies.size() == frames);
  CHECK(got.stray_bytes == 0);
  std::uint64_t last = 0, checked = 0;
  std::string segment;
  for (const auto& f : got.replies) {
    REQUIRE(reply_type(f) == 0x07);
    auto c = wire::decode_coordinate(byte_span(f.data() + wire::header_size, f.size() - wire::header_size - 4));
    REQUIRE(c);
    if (c.value().segment != segment) CHECK(c.value().index == 1);
    else CHECK(c.value().index == last + 1);
    last = c.value().index;
    segment = c.value().segment;
    ++checked;
  }
  CHECK(checked == frames);
  REQUIRE(d.stop() == 0);
}

TEST_CASE("live: many connections over several shards keep each connection's order", "[live][ingest][shards]") {
  // adaptive: twelve connections sending move the reads to the epoll set
  // part-way (and back as they finish); always: the set throughout, with
  // one io thread and with two taking its wake-ups in turn.
  const auto [reads, io_threads] = GENERATE(table<std::string, std::string>(
      {{"adaptive", "1"}, {"always", "1"}, {"always", "2"}, {"off", "2"}}));
  INFO("runtime.read_batching " << reads << ", runtime.io_threads " << io_threads);
  temp_dir dir;
  daemon_process d(dir.path(), kept_in_wab({"--set", "ingest.shards=4", "--set", "runtime.read_batching=" + reads,
                                            "--set", "runtime.io_threads=" + io_threads}));
  REQUIRE(d.wait_ready());
  constexpr int producers = 12, per_producer = 150;
  std::vector<std::thread> threads;
  std::vector<int> acked(producers, 0);
  for (int p = 0; p < producers; ++p)
    threads.emplace_back([&, p] {
      auto c = client::connection::connect_unix(d.socket_path());
      for (int i = 0; i < per_producer; ++i) {
        std::string payload = "p";
        payload += std::to_string(p);
        payload += ':';
        payload += std::to_string(i);
        if (c.push(as_bytes(payload), i % 4 == 0 ? durability::buffered : durability::durable).acked) ++acked[p];
      }
    });
  for (auto& t : threads) t.join();
  for (int p = 0; p < producers; ++p) CHECK(acked[p] == per_producer);
  REQUIRE(d.stop() == 0);
  std::map<int, std::set<std::string>> shards_of_producer;
  std::map<int, int> next_of_producer;
  int shard_no = 0, used_shards = 0;
  for (const auto& shard : all_shard_records(dir / "var")) {
    used_shards += shard.empty() ? 0 : 1;
    for (const auto& r : shard) {
      const auto colon = r.payload.find(':');
      const int p = std::stoi(r.payload.substr(1, colon - 1)), i = std::stoi(r.payload.substr(colon + 1));
      shards_of_producer[p].insert(std::to_string(shard_no));
      CHECK(i == next_of_producer[p]);  // in order, nothing missing, nothing twice
      next_of_producer[p] = i + 1;
    }
    ++shard_no;
  }
  CHECK(used_shards == 4);
  for (int p = 0; p < producers; ++p) {
    CHECK(shards_of_producer[p].size() == 1);  // pinned to one shard for its life
    CHECK(next_of_producer[p] == per_producer);
  }
}

TEST_CASE("live: SIGTERM answers what is in flight before the daemon exits", "[live][ingest][shutdown]") {
  temp_dir dir;
  daemon_process d(dir.path(), kept_in_wab());
  REQUIRE(d.wait_ready());
  wire_peer peer(d.socket_path());
  byte_buffer stream;
  for (int i = 0; i < 2000; ++i) {
    auto f = push_frame(wire::message_type::push, 0x01, "inflight " + std::to_string(i));
    stream.insert(stream.end(), f.begin(), f.end());
  }
  REQUIRE(peer.send(stream));
  auto first = peer.collect_frames(1);  // the daemon is busy with the stream now
  REQUIRE(first.replies.size() >= 1);
  ::kill(d.pid(), SIGTERM);
  auto got = peer.collect(std::chrono::milliseconds(3000));
  got.replies.insert(got.replies.begin(), first.replies.begin(), first.replies.end());
  CHECK(got.closed);
  CHECK(got.stray_bytes == 0);  // no reply cut in half
  CHECK(d.wait_exit() == 0);
  const auto wab = wab_by_payload(dir / "var");
  std::size_t acks = 0;
  for (std::size_t i = 0; i < got.replies.size(); ++i) {
    if (reply_type(got.replies[i]) != 0x02) continue;
    ++acks;
    CHECK(wab.count("inflight " + std::to_string(i)));
  }
  INFO("acked before exit: " << acks);
  CHECK(acks >= 1);
  CHECK(acks == got.replies.size());  // what was taken in was synced and acked, not dropped
}
