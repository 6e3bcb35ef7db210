// Version-2 segments: spares prepared ahead of need or recycled from
// delivered segments, seals that let recovery skip a segment, and the rule
// that a reused file's earlier records never read as records of its new life.
#include <cstdio>
#include <set>
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "wab/recovery.hpp"
#include "wab/segment_reader.hpp"
#include "wab/segment_writer.hpp"
#include "wab/spare_pool.hpp"
#include "support/faulty_file_io.hpp"
#include "support/test_paths.hpp"
#include "support/v1_segment.hpp"
#include "support/wab_contents.hpp"

using namespace weir;
using namespace weir::wab;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t segment_bytes = 256 * 1024;

byte_buffer read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return byte_buffer(std::istreambuf_iterator<char>(in), {});
}

/// A spare as the preparer leaves it: zeros, a segment long.
void write_prepared_spare(const fs::path& p) {
  std::ofstream(p).close();
  fs::resize_file(p, segment_bytes);
}

std::size_t files_named(const fs::path& dir, const std::string& prefix) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().filename().string().rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

struct spare_fixture {
  test::temp_dir dir;
  fs::path shard = dir / "wab/shard_00";
  fs::path quarantine = dir / "quarantine";
  std::shared_ptr<test::faulty_file_io> io = std::make_shared<test::faulty_file_io>();
  spare_fixture() {
    fs::create_directories(shard);
    fs::create_directories(quarantine);
  }
  fs::path segment(std::uint64_t seq) const { return shard / segment_file_name(seq); }
  shard_recovery recover() { return recover_shard(*io, shard.string(), quarantine.string()); }

  std::shared_ptr<segment_writer> make(std::uint64_t seq, const std::vector<std::string>& payloads,
                                       const std::string& spare = {}) {
    auto w = segment_writer::create(io, shard.string(), 0, seq, 1, {}, spare);
    REQUIRE(w);
    std::vector<byte_span> spans;
    for (const auto& p : payloads) spans.emplace_back(reinterpret_cast<const std::uint8_t*>(p.data()), p.size());
    if (!spans.empty()) REQUIRE(w.value()->append(spans, 1000).error == 0);
    REQUIRE(w.value()->sync() == 0);
    return std::move(w).value();
  }

  std::vector<std::string> payloads(std::uint64_t seq) { return test::read_segment_file(segment(seq)).payloads; }

  segment_header header(std::uint64_t seq) {
    const int fd = io->open_existing(segment(seq).string());
    REQUIRE(fd >= 0);
    const auto h = read_segment_header(*io, fd);
    io->close(fd);
    REQUIRE(h);
    return h.value();
  }
};

}  // namespace

TEST_CASE("spares are zero-filled to the segment size and the pool keeps as many as it is told", "[wab][spares]") {
  spare_fixture f;
  spare_pool pool(f.io, f.shard.string(), segment_bytes, 2, 0);
  CHECK(pool.prepare_one() == 1);
  CHECK(pool.prepare_one() == 1);
  CHECK(pool.prepare_one() == 0);  // enough
  CHECK(pool.held() == 2);
  auto taken = pool.take();
  REQUIRE(taken);
  const auto bytes = read_file(*taken);
  CHECK(bytes.size() == segment_bytes);
  CHECK(std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; }));
  CHECK(pool.held() == 1);
  CHECK(pool.prepare_one() == 1);  // refilled after a take
  CHECK(files_named(f.shard, "spare_") == 3);  // the taken one is the caller's now, still under its name
}

TEST_CASE("a spare is not prepared without room for it and leaves nothing behind", "[wab][spares]") {
  spare_fixture f;
  spare_pool pool(f.io, f.shard.string(), segment_bytes, 1, 64 * 1024);
  // Room for the spare alone is not enough: a growing segment needs its own.
  f.io->free_space = 2 * segment_bytes + 64 * 1024 - 1;
  CHECK(pool.prepare_one() == -ENOSPC);
  f.io->free_space = -1;
  f.io->fail_next_sync = EIO;
  CHECK(pool.prepare_one() == -EIO);
  CHECK(pool.held() == 0);
  CHECK(files_named(f.shard, "spare_") == 0);
  CHECK(pool.prepare_one() == 1);
}

TEST_CASE("a restart takes over spares and removes interrupted preparations and spares beyond the count", "[wab][spares]") {
  spare_fixture f;
  for (const char* name : {"spare_00000001.wab", "spare_00000002.wab", "spare_00000007.tmp"})
    write_prepared_spare(f.shard / name);
  spare_pool pool(f.io, f.shard.string(), segment_bytes, 1, 0);
  REQUIRE(pool.adopt() == 0);
  CHECK(pool.held() == 1);
  CHECK(files_named(f.shard, "spare_") == 1);
  CHECK_FALSE(fs::exists(f.shard / "spare_00000007.tmp"));
  CHECK(pool.take());
  CHECK(pool.prepare_one() == 1);
  CHECK(fs::exists(f.shard / "spare_00000008.wab"));  // numbers are not reused
}

TEST_CASE("a restart keeps the lowest-numbered spares whatever the listing order", "[wab][spares]") {
  spare_fixture f;
  char name[32];
  for (int n = 1; n <= 20; ++n) {
    std::snprintf(name, sizeof name, "spare_%08d.wab", n);
    write_prepared_spare(f.shard / name);
  }
  spare_pool pool(f.io, f.shard.string(), segment_bytes, 3, 0);
  REQUIRE(pool.adopt() == 0);
  CHECK(pool.held() == 3);
  CHECK(files_named(f.shard, "spare_") == 3);
  std::set<std::string> taken;
  while (auto path = pool.take()) taken.insert(fs::path(*path).filename().string());
  CHECK(taken == std::set<std::string>{"spare_00000001.wab", "spare_00000002.wab", "spare_00000003.wab"});
}

TEST_CASE("a delivered segment is recycled only while the pool wants one and when it is a segment's size",
          "[wab][spares]") {
  spare_fixture f;
  spare_pool pool(f.io, f.shard.string(), 64, 1, 0);
  f.make(1, {});                                   // 64 bytes: a segment's size here
  std::ofstream(f.shard / "small.wab") << "tiny";  // smaller: not worth keeping
  CHECK(pool.recycle((f.shard / "small.wab").string()) == 0);
  CHECK(pool.recycle(f.segment(1).string()) == 1);
  CHECK_FALSE(fs::exists(f.segment(1)));
  f.make(2, {});
  CHECK(pool.recycle(f.segment(2).string()) == 0);  // the pool is full
  CHECK(fs::exists(f.segment(2)));
  CHECK(pool.held() == 1);
}

TEST_CASE("a delivered version-1 segment is deleted rather than recycled", "[wab][spares]") {
  // Its records' CRCs do not start from the sequence: in a reused file one
  // could pass for a record of the new segment.
  spare_fixture f;
  const byte_buffer header = test::v1_segment_header(0, 1, 1);
  byte_buffer image(segment_bytes, 0);
  std::copy(header.begin(), header.end(), image.begin());
  std::ofstream(f.segment(1), std::ios::binary).write(reinterpret_cast<const char*>(image.data()), image.size());
  spare_pool pool(f.io, f.shard.string(), segment_bytes, 1, 0);
  CHECK(pool.recycle(f.segment(1).string()) == 0);
  CHECK(fs::exists(f.segment(1)));
  CHECK(pool.held() == 0);
  // The same file as a version-2 segment is kept.
  f.make(2, {"a record"});
  fs::resize_file(f.segment(2), segment_bytes);
  CHECK(pool.recycle(f.segment(2).string()) == 1);

  // One an earlier release recycled is given back to the disk at a restart,
  // and so is one whose header no longer checks (it may be a version-1
  // segment's); a prepared spare (zeros) and a recycled version-2 segment
  // are kept.
  fs::rename(f.segment(1), f.shard / "spare_00000009.wab");
  image[12] ^= 0x01;  // inside the header: its CRC fails
  std::ofstream(f.shard / "spare_00000007.wab", std::ios::binary)
      .write(reinterpret_cast<const char*>(image.data()), image.size());
  write_prepared_spare(f.shard / "spare_00000005.wab");
  spare_pool again(f.io, f.shard.string(), segment_bytes, 4, 0);
  REQUIRE(again.adopt() == 0);
  CHECK(again.held() == 2);
  CHECK_FALSE(fs::exists(f.shard / "spare_00000009.wab"));
  CHECK_FALSE(fs::exists(f.shard / "spare_00000007.wab"));
  CHECK(fs::exists(f.shard / "spare_00000005.wab"));
}

TEST_CASE("a segment in a reused file never reads the file's earlier records", "[wab][spares][recovery]") {
  spare_fixture f;
  spare_pool pool(f.io, f.shard.string(), 64, 1, 0);
  // Segment 1 is written, sealed, delivered and recycled: its records stay in the file.
  {
    auto old = f.make(1, {"old record one", "old record two", "old record three"});
    REQUIRE(old->seal() == 0);
  }
  REQUIRE(pool.recycle(f.segment(1).string()) == 1);
  auto spare = pool.take();
  REQUIRE(spare);
  // Segment 2 starts in that file and holds one short record when the daemon dies.
  { auto now = f.make(2, {"new"}, *spare); }
  const auto bytes = read_file(f.segment(2));
  const std::string old_bytes(bytes.begin(), bytes.end());
  CHECK(old_bytes.find("old record two") != std::string::npos);  // the earlier life is still on disk
  CHECK_FALSE(f.header(2).seal);

  auto r = f.recover();
  CHECK(r.records == 1);
  CHECK(r.damaged_records == 0);
  CHECK(r.quarantined_segments == 0);
  CHECK(r.sealed_segments == 1);  // sealed where its records end
  REQUIRE(r.segments.size() == 1);
  CHECK(r.segments[0].valid_bytes == segment_prefix_size + record_header_size + 3);
  CHECK(f.payloads(2) == std::vector<std::string>{"new"});
  REQUIRE(f.header(2).seal);
  CHECK(f.header(2).seal->records == 1);
  // The next start reads nothing: the seal says it all.
  auto again = f.recover();
  CHECK(again.sealed_segments == 0);
  CHECK(again.records == 1);
}

TEST_CASE("recovery takes a sealed segment at its seal's word without reading it", "[wab][recovery]") {
  spare_fixture f;
  {
    auto w = f.make(1, {"alpha", "bravo", "charlie"});
    REQUIRE(w->seal() == 0);
    CHECK(w->append_closed());
  }
  f.make(2, {"newer"});
  const auto seal = f.header(1).seal;
  REQUIRE(seal);
  CHECK(seal->records == 3);
  CHECK(seal->data_end == segment_prefix_size + 3 * record_header_size + 5 + 5 + 7);
  // Damage inside it is not seen at startup (the drain finds it as it reads):
  // what a sealed segment costs recovery is one read of its first 64 bytes.
  {
    std::fstream file(f.segment(1), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(segment_prefix_size + record_header_size + 5 + record_header_size));
    file.put('X');
  }
  auto r = f.recover();
  CHECK(r.records == 4);
  CHECK(r.damaged_records == 0);
  CHECK(r.quarantined_segments == 0);
  CHECK(r.sealed_segments == 1);  // segment 2 was open
}

TEST_CASE("an unsealed version-2 segment with a good record after a bad one is damage", "[wab][recovery]") {
  spare_fixture f;
  { auto w = f.make(1, {"one", "two", "three"}); }
  {
    std::fstream file(f.segment(1), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(segment_prefix_size + record_header_size + 3 + record_header_size));
    file.put('X');  // "two"
  }
  auto r = f.recover();
  CHECK(r.records == 2);
  CHECK(r.damaged_records == 1);
  CHECK(r.quarantined_segments == 1);
  CHECK(fs::exists(f.quarantine / "shard_00__seg_00000001.wab"));
  REQUIRE(f.header(1).seal);
  CHECK(f.header(1).seal->data_end == segment_prefix_size + 3 * record_header_size + 3 + 3 + 5);
}

TEST_CASE("a seal claiming more than the file holds is not believed and the loss is damage", "[wab][recovery]") {
  spare_fixture f;
  {
    auto w = f.make(1, {"one", "two"});
    REQUIRE(w->seal() == 0);
  }
  f.make(2, {"newer"});
  fs::resize_file(f.segment(1), segment_prefix_size + record_header_size + 3);  // "two" cut off by someone
  auto r = f.recover();
  CHECK(r.records == 2);  // "one", and "newer"
  CHECK(r.damaged_records == 1);
  CHECK(r.quarantined_segments == 1);
  CHECK(fs::exists(f.quarantine / "shard_00__seg_00000001.wab"));
  CHECK(std::any_of(r.events.begin(), r.events.end(), [](const recovery_event& e) {
    return e.level == recovery_event::severity::error &&
           e.what == "segment shorter than its seal says: records past its end are lost; copied to quarantine";
  }));
  CHECK(f.payloads(1) == std::vector<std::string>{"one"});
  REQUIRE(f.header(1).seal);
  CHECK(f.header(1).seal->records == 1);  // sealed again where its records now end
  CHECK(f.recover().damaged_records == 0);
}

TEST_CASE("a segment file holding another segment's header is read as that segment under its own name",
          "[wab][recovery]") {
  spare_fixture f;
  // A delivered segment 1 was renamed to a spare and reused for segment 5;
  // a power loss undid both renames: the name says 1, the header says 5.
  // What it holds is segment 5's (nothing yet): it becomes seg 5 again,
  // never read as segment 1.
  { auto reused = f.make(5, {}); }
  fs::rename(f.segment(5), f.segment(1));
  f.make(6, {"newer"});
  auto r = f.recover();
  CHECK_FALSE(fs::exists(f.segment(1)));
  CHECK(fs::exists(f.segment(5)));
  CHECK(r.renamed_segments == 1);
  REQUIRE(r.segments.size() == 2);
  CHECK(r.segments[0].sequence == 5);
  CHECK(r.segments[0].records == 0);
  CHECK(r.segments[1].sequence == 6);
  CHECK(r.quarantined_segments == 0);  // not damage
  CHECK(r.next_sequence == 7);
}

TEST_CASE("a sealed segment's later syncs succeed without touching its file", "[wab][writer][spares]") {
  spare_fixture f;
  auto w = f.make(1, {"sealed"});
  REQUIRE(w->seal() == 0);
  // The file may be a spare, or another segment, by the time a sync that
  // waited at the fsync group runs: the seal already made every write durable.
  const int syncs = f.io->syncs.load(), writes = f.io->writes.load();
  f.io->fail_next_sync = EIO;
  CHECK(w->sync() == 0);
  CHECK(w->seal() == 0);  // nor does sealing again write its seal slot
  CHECK(f.io->syncs.load() == syncs);
  CHECK(f.io->writes.load() == writes);
  CHECK_FALSE(w->sync_failed());
  f.io->fail_next_sync = 0;
}

TEST_CASE("a segment whose sync failed is never sealed", "[wab][writer][faults]") {
  spare_fixture f;
  auto w = f.make(1, {"maybe"});
  f.io->fail_next_sync = EIO;
  CHECK(w->seal() == -EIO);
  CHECK(w->sync_failed());
  CHECK_FALSE(f.header(1).seal);
}

TEST_CASE("a spare that cannot be opened is removed and not left taken and unused", "[wab][writer][spares][faults]") {
  spare_fixture f;
  spare_pool pool(f.io, f.shard.string(), segment_bytes, 1, 0);
  REQUIRE(pool.prepare_one() == 1);
  auto spare = pool.take();
  REQUIRE(spare);
  f.io->fail_opens = EMFILE;
  auto w = segment_writer::create(f.io, f.shard.string(), 0, 1, 1, {}, *spare);
  f.io->fail_opens = 0;
  CHECK_FALSE(w);
  CHECK_FALSE(fs::exists(*spare));
  CHECK_FALSE(fs::exists(f.segment(1)));
  CHECK(files_named(f.shard, "spare_") == 0);
}

TEST_CASE("a restart numbers segments past every recycled spare's even with no segment and no cursor left",
          "[wab][spares][recovery]") {
  // Every segment delivered and recycled, and the confirm cursor (which
  // remembers the numbers) lost: a new segment numbered like a spare's old
  // one could start in it and read its old records as its own.
  spare_fixture f;
  f.make(5, {"an old record"});
  fs::resize_file(f.segment(5), segment_bytes);
  spare_pool pool(f.io, f.shard.string(), segment_bytes, 1, 0);
  REQUIRE(pool.recycle(f.segment(5).string()) == 1);
  REQUIRE(files_named(f.shard, "seg_") == 0);
  write_prepared_spare(f.shard / "spare_00000009.wab");  // zeros: no number to go past
  CHECK(f.recover().next_sequence == 6);
}

TEST_CASE("a damaged segment header is written again from the file name and no record is lost",
          "[wab][recovery]") {
  spare_fixture f;
  auto flip = [&](std::uint64_t seq, std::size_t at) {
    auto image = read_file(f.segment(seq));
    image[at] ^= 0x01;
    std::ofstream(f.segment(seq), std::ios::binary)
        .write(reinterpret_cast<const char*>(image.data()), static_cast<std::streamsize>(image.size()));
  };
  f.make(3, {"a", "b", "c"});                        // the open segment
  auto sealed = f.make(2, {"d", "e"});
  REQUIRE(sealed->seal() == 0);
  sealed.reset();
  flip(3, 16);  // its creation time
  flip(2, 6);   // its shard
  const auto r = f.recover();
  CHECK(r.records == 5);
  CHECK(r.damaged_records == 0);
  CHECK(r.quarantined_segments == 2);  // copies kept for inspection
  CHECK(f.payloads(3) == std::vector<std::string>{"a", "b", "c"});
  CHECK(f.payloads(2) == std::vector<std::string>{"d", "e"});
  CHECK(f.header(3).sequence == 3);
  CHECK(f.header(2).seal.has_value());  // its seal slot was kept and still checks
  std::size_t rewritten = 0;
  for (const auto& e : r.events) rewritten += e.what.find("written again from the file name") != std::string::npos;
  CHECK(rewritten == 2);
  // Once written again, a restart finds nothing wrong.
  CHECK(f.recover().events.empty());
}
