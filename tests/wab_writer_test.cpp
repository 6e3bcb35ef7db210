// The segment writer: one write per group, indices, and retirement after any
// write or sync failure (EIO, ENOSPC, short writes through the file I/O seam).
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "wire/coordinate.hpp"
#include "wab/recovery.hpp"
#include "wab/segment_reader.hpp"
#include "wab/segment_writer.hpp"
#include "support/faulty_file_io.hpp"
#include "support/test_paths.hpp"
#include "support/wab_contents.hpp"

using namespace weir;
using namespace weir::wab;
namespace fs = std::filesystem;

namespace {

byte_buffer bytes_of(const std::string& s) { return byte_buffer(s.begin(), s.end()); }

byte_buffer read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return byte_buffer((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

struct writer_fixture {
  weir::test::temp_dir dir;
  std::shared_ptr<weir::test::faulty_file_io> io = std::make_shared<weir::test::faulty_file_io>();
  std::string shard_dir = (dir / "shard_01").string();
  writer_fixture() { fs::create_directories(shard_dir); }

  std::shared_ptr<segment_writer> make(std::uint64_t seq = 1) {
    auto w = segment_writer::create(io, shard_dir, 1, seq, 1);
    REQUIRE(w);
    return std::move(w).value();
  }
  std::vector<std::string> payloads_on_disk(std::uint64_t seq = 1) {
    const auto read = weir::test::read_segment_file(fs::path(shard_dir) / segment_file_name(seq));
    CHECK(read.stop == "end_of_file");
    return read.payloads;
  }
};

}  // namespace

TEST_CASE("a group of records is appended with indices continuing across groups", "[wab][writer]") {
  writer_fixture f;
  auto w = f.make();
  CHECK(w->name() == "shard_01/seg_00000001.wab");
  auto a = bytes_of("a"), b = bytes_of("bb"), c = bytes_of("ccc");
  auto first = w->append({a, b}, 10);
  REQUIRE(first.error == 0);
  CHECK(first.landed == 2);
  CHECK(first.first_index == 1);
  auto second = w->append({c}, 11);
  REQUIRE(second.error == 0);
  CHECK(second.first_index == 3);
  CHECK(second.end_offset == w->size());
  CHECK(w->sync() == 0);
  CHECK(f.payloads_on_disk() == std::vector<std::string>{"a", "bb", "ccc"});
  CHECK(fs::status(w->path()).permissions() == (fs::perms::owner_read | fs::perms::owner_write));
}

TEST_CASE("an existing segment file is never overwritten", "[wab][writer]") {
  writer_fixture f;
  auto w = f.make(3);
  auto again = segment_writer::create(f.io, f.shard_dir, 1, 3, 1);
  REQUIRE_FALSE(again);
  CHECK(again.error() == -EEXIST);
}

TEST_CASE("a failed sync retires the segment for good", "[wab][writer][faults]") {
  writer_fixture f;
  auto w = f.make();
  auto p = bytes_of("durable?");
  REQUIRE(w->append({p}, 1).error == 0);
  f.io->fail_next_sync = EIO;
  CHECK(w->sync() == -EIO);
  CHECK(w->sync_failed());
  CHECK(w->append_closed());
  // Even though the disk would now report success, this file is finished.
  CHECK(w->sync() == -EIO);
  CHECK(w->append({p}, 2).error == -EIO);
}

TEST_CASE("a failed or short write leaves no partial record and closes the segment", "[wab][writer][faults]") {
  for (int mode = 0; mode < 2; ++mode) {
    writer_fixture f;
    auto w = f.make();
    auto kept = bytes_of("kept"), lost = bytes_of("this group fails to write");
    REQUIRE(w->append({kept}, 1).error == 0);
    if (mode == 0)
      f.io->fail_next_write = ENOSPC;
    else
      f.io->short_next_write = 7;
    auto r = w->append({lost, lost}, 2);
    CHECK(r.error == -ENOSPC);
    CHECK(r.landed == 0);
    CHECK(w->append_closed());
    CHECK_FALSE(w->sync_failed());
    CHECK(w->append({kept}, 3).error == -EIO);
    CHECK(f.payloads_on_disk() == std::vector<std::string>{"kept"});
  }
}

TEST_CASE("a disk filling mid-group keeps the records that landed whole and they can still be synced",
          "[wab][writer][faults]") {
  writer_fixture f;
  auto w = f.make();
  auto r1 = bytes_of("one"), r2 = bytes_of("two"), r3 = bytes_of("three");
  // Whole first and second records (16 + 3 bytes each) plus 5 bytes of the third.
  f.io->short_next_write = 2 * (record_header_size + 3) + 5;
  auto r = w->append({r1, r2, r3}, 1);
  CHECK(r.error == -ENOSPC);
  CHECK(r.landed == 2);
  CHECK(r.first_index == 1);
  CHECK(r.end_offset == segment_prefix_size + 2 * (record_header_size + 3));
  CHECK(w->size() == r.end_offset);
  CHECK(w->sync() == 0);
  CHECK(f.payloads_on_disk() == std::vector<std::string>{"one", "two"});
  CHECK(fs::file_size(w->path()) == r.end_offset);
}

TEST_CASE("a failure while creating a segment leaves no file behind", "[wab][writer][faults]") {
  writer_fixture f;
  f.io->fail_next_sync = EIO;
  auto w = segment_writer::create(f.io, f.shard_dir, 1, 1, 1);
  REQUIRE_FALSE(w);
  CHECK(w.error() == -EIO);
  CHECK(fs::is_empty(f.shard_dir));
}

TEST_CASE("what a writer wrote is what recovery and record ids see", "[wab][writer]") {
  writer_fixture f;
  {
    auto w = f.make(7);
    auto x = bytes_of("x"), y = bytes_of("y");
    REQUIRE(w->append({x, y}, 5).error == 0);
    REQUIRE(w->sync() == 0);
  }
  fs::create_directories(f.dir / "quarantine");
  auto r = recover_shard(*f.io, f.shard_dir, (f.dir / "quarantine").string());
  CHECK(r.records == 2);
  CHECK(r.next_sequence == 8);
  auto id = wire::compute_record_id("shard_01/seg_00000007.wab", 2, bytes_of("y"));
  CHECK(wire::to_hex(id).size() == 64);
}

TEST_CASE("a replica copies an origin's records byte for byte and reopens its copy after a seal", "[wab][writer][replica]") {
  writer_fixture f;
  auto origin = f.make(4);
  auto a = bytes_of("first"), b = bytes_of("second"), c = bytes_of("third");
  REQUIRE(origin->append({a, b}, 10).error == 0);
  REQUIRE(origin->append({c}, 11).error == 0);
  REQUIRE(origin->sync() == 0);
  // The origin's record bytes, as a replicator reads them from its file.
  const auto file = read_file_bytes(origin->path());
  const byte_span records(file.data() + segment_prefix_size, origin->size() - segment_prefix_size);
  const std::uint32_t seed = segment_header{.sequence = 4}.crc_seed();
  const auto ends = check_framed_records(records, seed);
  REQUIRE(ends);
  CHECK(ends->size() == 3);

  weir::test::temp_dir other;
  const std::string copy_dir = (other / "shard_01").string();
  fs::create_directories(copy_dir);
  auto made = segment_writer::create(f.io, copy_dir, 1, 4, 1);
  REQUIRE(made);
  auto copy = std::move(made).value();
  const auto first_two = byte_span(records.data(), (*ends)[1]);
  REQUIRE(copy->append_framed(first_two, {(*ends)[0], (*ends)[1]}).landed == 2);
  REQUIRE(copy->seal() == 0);  // a repair sealed it where its records end
  copy.reset();

  // The origin's third record comes later: the copy is reopened, its seal cleared.
  auto reopened = segment_writer::reopen(f.io, copy_dir + "/" + segment_file_name(4), 4);
  REQUIRE(reopened);
  auto w = std::move(reopened).value();
  CHECK(w->size() == segment_prefix_size + (*ends)[1]);
  CHECK(w->records() == 2);
  const auto third = byte_span(records.data() + (*ends)[1], (*ends)[2] - (*ends)[1]);
  const auto appended = w->append_framed(third, {third.size()});
  REQUIRE(appended.error == 0);
  CHECK(appended.first_index == 3);
  REQUIRE(w->sync() == 0);
  const auto read = weir::test::read_segment_file(fs::path(copy_dir) / segment_file_name(4));
  CHECK(read.stop == "end_of_file");
  CHECK(read.payloads == std::vector<std::string>{"first", "second", "third"});
  // Same records at the same offsets: the copy's record ids are the origin's.
  CHECK(read_file_bytes(w->path()).size() == file.size());
}

TEST_CASE("bytes from a peer that are not whole records of the segment are refused", "[wab][writer][replica]") {
  writer_fixture f;
  auto origin = f.make(7);
  auto a = bytes_of("payload");
  REQUIRE(origin->append({a, a}, 10).error == 0);
  const auto file = read_file_bytes(origin->path());
  byte_buffer records(file.begin() + segment_prefix_size, file.end());
  CHECK(check_framed_records(records, segment_header{.sequence = 7}.crc_seed()));
  CHECK_FALSE(check_framed_records(records, segment_header{.sequence = 8}.crc_seed()));  // another segment's
  CHECK_FALSE(check_framed_records(byte_span(records.data(), records.size() - 1), segment_header{.sequence = 7}.crc_seed()));
  byte_buffer flipped = records;
  flipped[20] ^= 1;
  CHECK_FALSE(check_framed_records(flipped, segment_header{.sequence = 7}.crc_seed()));
  byte_buffer huge(16, 0xff);  // a length past the record limit
  CHECK_FALSE(check_framed_records(huge, segment_header{.sequence = 7}.crc_seed()));
  CHECK(check_framed_records(byte_span(), 0)->empty());
  // A file that is not a version-2 segment of that sequence is not reopened.
  CHECK_FALSE(segment_writer::reopen(f.io, origin->path(), 8));
}
