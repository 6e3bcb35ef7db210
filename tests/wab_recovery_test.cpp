// Segment reading and startup recovery on crafted files: a clean segment, a
// torn tail, a zero-filled tail, corruption in the middle, a bad header.
// Most images here are version 1, what earlier releases wrote, which must
// still be read; the version-2 cases (seals, spares with an earlier life's
// bytes) are at the end.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <set>
#include <fstream>
#include <limits>
#include <map>

#include <catch2/catch.hpp>

#include "wab/confirm_cursor.hpp"
#include "wab/recovery.hpp"
#include "wab/segment_writer.hpp"
#include "wab/segment_format.hpp"
#include "wab/segment_reader.hpp"
#include "support/test_paths.hpp"
#include "support/v1_segment.hpp"

using namespace weir;
using namespace weir::wab;
namespace fs = std::filesystem;

namespace {

byte_buffer bytes_of(const std::string& s) { return byte_buffer(s.begin(), s.end()); }

/// A version-1 segment image: header plus one record per payload, timestamps ts, ts + 1...
byte_buffer segment_image(std::uint16_t shard, std::uint64_t seq, const std::vector<std::string>& payloads,
                          std::int64_t created_at = 42, std::int64_t ts = 1000) {
  byte_buffer out = weir::test::v1_segment_header(shard, seq, created_at);
  for (auto& p : payloads) append_record(out, 0, ts++, bytes_of(p));
  return out;
}

void write_file(const fs::path& p, const byte_buffer& b) {
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

byte_buffer read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return byte_buffer(std::istreambuf_iterator<char>(in), {});
}

struct shard_fixture {
  weir::test::temp_dir dir;
  fs::path shard = dir / "wab/shard_00";
  fs::path quarantine = dir / "quarantine";
  shard_fixture() {
    fs::create_directories(shard);
    fs::create_directories(quarantine);
  }
  fs::path segment(std::uint64_t seq) const { return shard / segment_file_name(seq); }
  shard_recovery recover() { return recover_shard(*default_file_io(), shard.string(), quarantine.string()); }
};

segment_header header_of(file_io& io, int fd) {
  const auto h = read_segment_header(io, fd);
  REQUIRE(h);
  return h.value();
}

std::uint64_t end_of(file_io& io, int fd) { return records_end(header_of(io, fd), static_cast<std::uint64_t>(io.size(fd))); }

std::vector<std::string> read_payloads(const fs::path& p) {
  auto& io = *default_file_io();
  const int fd = io.open_existing(p.string());
  REQUIRE(fd >= 0);
  segment_reader r(io, fd, header_of(io, fd), end_of(io, fd));
  std::vector<std::string> out;
  while (auto rec = r.next()) out.emplace_back(rec->payload.begin(), rec->payload.end());
  io.close(fd);
  return out;
}

std::int64_t wall_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct indexed {
  std::uint64_t index;
  std::string payload;
  bool operator==(const indexed&) const = default;
};

/// What the drain reads: with a resync window, past any damage.
std::vector<indexed> read_indexed(const fs::path& p) {
  auto& io = *default_file_io();
  const int fd = io.open_existing(p.string());
  REQUIRE(fd >= 0);
  const auto header = header_of(io, fd);
  segment_reader r(io, fd, header, end_of(io, fd), 0, 1, resync_window_for(header, wall_clock_ns()));
  std::vector<indexed> out;
  while (auto rec = r.next()) out.push_back({rec->index, std::string(rec->payload.begin(), rec->payload.end())});
  io.close(fd);
  return out;
}

}  // namespace

TEST_CASE("segment names and headers round-trip", "[wab]") {
  CHECK(segment_file_name(1) == "seg_00000001.wab");
  CHECK(shard_dir_name(3) == "shard_03");
  CHECK(parse_segment_file_name("seg_00000042.wab") == 42u);
  CHECK_FALSE(parse_segment_file_name("seg_00000042.wab.tmp"));
  CHECK_FALSE(parse_segment_file_name("seg_0000000x.wab"));
  auto h = encode_segment_prefix({.shard = 7, .sequence = 99, .created_at_ns = 123456789});
  auto d = decode_segment_header(h);
  REQUIRE(d);
  CHECK(d.value().shard == 7);
  CHECK(d.value().sequence == 99);
  CHECK(d.value().version == 2);
  CHECK(d.value().data_start() == segment_prefix_size);
  CHECK_FALSE(d.value().seal);
  // A seal is the segment's own: the same bytes under another sequence do not check.
  const auto seal = encode_seal(99, {3, 4096});
  std::copy(seal.begin(), seal.end(), h.begin() + segment_header_size);
  REQUIRE(decode_segment_header(h));
  CHECK(decode_segment_header(h).value().seal == segment_seal{3, 4096});
  const auto other = encode_seal(98, {3, 4096});
  std::copy(other.begin(), other.end(), h.begin() + segment_header_size);
  CHECK_FALSE(decode_segment_header(h).value().seal);
  CHECK(decode_segment_header(byte_span(h.data(), segment_header_size)).error() == header_error::too_short);
  h[10] ^= 1;
  CHECK(decode_segment_header(h).error() == header_error::bad_crc);
  const auto v1 = weir::test::v1_segment_header(7, 99, 1);
  REQUIRE(decode_segment_header(v1));
  CHECK(decode_segment_header(v1).value().version == 1);
  CHECK(decode_segment_header(v1).value().data_start() == segment_header_size);
}

TEST_CASE("the reader yields every record with its index and timestamp", "[wab]") {
  shard_fixture f;
  write_file(f.segment(1), segment_image(0, 1, {"a", "bb", "ccc"}));
  auto& io = *default_file_io();
  const int fd = io.open_existing(f.segment(1).string());
  segment_reader r(io, fd, header_of(io, fd), end_of(io, fd));
  std::vector<std::uint64_t> offsets;
  for (std::uint64_t i = 1; i <= 3; ++i) {
    auto rec = r.next();
    REQUIRE(rec);
    CHECK(rec->index == i);
    CHECK(rec->ingest_ts_ns == static_cast<std::int64_t>(999 + i));
    CHECK(rec->payload.size() == i);
    offsets.push_back(rec->offset);
  }
  CHECK_FALSE(r.next());
  CHECK(r.stop() == scan_stop::end_of_file);

  // A reader can resume from a known position, as the drain does.
  segment_reader resumed(io, fd, header_of(io, fd), end_of(io, fd), offsets[1], 2);
  auto rec = resumed.next();
  REQUIRE(rec);
  CHECK(rec->index == 2);
  CHECK(rec->payload == bytes_of("bb"));
  io.close(fd);
}

TEST_CASE("recovery keeps a clean segment untouched and continues the sequence", "[wab][recovery]") {
  shard_fixture f;
  const auto image = segment_image(0, 4, {"one", "two"});
  write_file(f.segment(4), image);
  auto r = f.recover();
  REQUIRE(r.segments.size() == 1);
  CHECK(r.segments[0].records == 2);
  CHECK(r.records == 2);
  CHECK(r.next_sequence == 5);
  CHECK(r.truncated_segments == 0);
  CHECK(read_file(f.segment(4)) == image);
}

TEST_CASE("a torn final write is truncated at the last valid record", "[wab][recovery]") {
  shard_fixture f;
  auto good = segment_image(0, 1, {"first", "second"});
  auto torn = good;
  append_record(torn, 0, 5, bytes_of("the third record never fully landed"));
  torn.resize(torn.size() - 10);
  write_file(f.segment(1), torn);
  auto r = f.recover();
  CHECK(r.records == 2);
  CHECK(r.truncated_segments == 1);
  CHECK(r.quarantined_segments == 0);
  CHECK(read_file(f.segment(1)) == good);
  // A routine repair: one warning for the caller to log, naming the segment.
  REQUIRE(r.events.size() == 1);
  CHECK(r.events[0].level == recovery_event::severity::warning);
  CHECK(r.events[0].what == "segment tail truncated at the last valid record");
  CHECK(r.events[0].fields.at(0) == std::pair<std::string, std::string>("segment", f.segment(1).string()));
}

TEST_CASE("a zero-filled tail is cut off and is not corruption", "[wab][recovery]") {
  shard_fixture f;
  auto good = segment_image(0, 1, {"x", "y", "z"});
  auto padded = good;
  padded.resize(good.size() + 8192, 0);
  write_file(f.segment(1), padded);
  auto r = f.recover();
  CHECK(r.records == 3);
  CHECK(r.quarantined_segments == 0);
  CHECK(read_file(f.segment(1)) == good);
}

TEST_CASE("a last record with a bad CRC and only zeros after it is a torn tail", "[wab][recovery]") {
  shard_fixture f;
  auto good = segment_image(0, 1, {"keep"});
  auto bad = good;
  append_record(bad, 0, 9, bytes_of("lost"));
  bad[bad.size() - 1] ^= 0xff;
  bad.resize(bad.size() + 100, 0);
  write_file(f.segment(1), bad);
  auto r = f.recover();
  CHECK(r.records == 1);
  CHECK(r.quarantined_segments == 0);
  CHECK(read_file(f.segment(1)) == good);
}

TEST_CASE("corruption in the middle: quarantine copy of the whole file and only the damaged record lost", "[wab][recovery]") {
  shard_fixture f;
  auto image = segment_image(0, 2, {"alpha", "bravo", "charlie"});
  // Flip a payload byte of "bravo" (record 2).
  const std::size_t bravo = segment_header_size + record_header_size + 5 + record_header_size;
  image[bravo] ^= 0x20;
  write_file(f.segment(2), image);
  auto r = f.recover();
  CHECK(r.records == 2);
  CHECK(r.damaged_records == 1);
  CHECK(r.quarantined_segments == 1);
  CHECK(r.damaged_at_startup == std::set<std::uint64_t>{2});  // the drain copies it no second time
  CHECK(r.truncated_segments == 0);
  // Damage is an error event, with what was lost.
  REQUIRE(r.events.size() == 1);
  CHECK(r.events[0].level == recovery_event::severity::error);
  CHECK(std::count(r.events[0].fields.begin(), r.events[0].fields.end(),
                   std::pair<std::string, std::string>("damaged_records_skipped", "1")) == 1);
  // The file stays as it was; a reader with a resync window steps over the damage.
  CHECK(read_file(f.segment(2)) == image);
  CHECK(read_indexed(f.segment(2)) == std::vector<indexed>{{1, "alpha"}, {3, "charlie"}});
  const auto copy = f.quarantine / "shard_00__seg_00000002.wab";
  REQUIRE(fs::exists(copy));
  CHECK(read_file(copy) == image);

  // A restart finds the same damage: its copy is there already.
  CHECK(f.recover().quarantined_segments == 0);
  CHECK_FALSE(fs::exists(f.quarantine / "shard_00__seg_00000002.wab.1"));
  // Different damage under the same name does not overwrite the first copy.
  image[bravo + 1] ^= 0x20;
  write_file(f.segment(2), image);
  CHECK(f.recover().quarantined_segments == 1);
  CHECK(fs::exists(f.quarantine / "shard_00__seg_00000002.wab.1"));
  CHECK(read_file(copy) != image);
}

TEST_CASE("a damaged length field in a closed segment loses no record", "[wab][recovery]") {
  shard_fixture f;
  std::vector<std::string> payloads;
  for (int i = 0; i < 300; ++i) payloads.push_back("record " + std::to_string(i));
  auto image = segment_image(0, 1, payloads);
  // Record 16's length now points far past the end of the file: the shape of
  // a torn write, but segment 1 was closed (segment 2 follows it).
  std::size_t at = segment_header_size;
  for (int i = 0; i < 15; ++i) at += record_header_size + payloads[static_cast<std::size_t>(i)].size();
  image[at + 2] = 0x7f;
  write_file(f.segment(1), image);
  write_file(f.segment(2), segment_image(0, 2, {"newer"}));
  auto r = f.recover();
  CHECK(r.records == 301);
  CHECK(r.damaged_records == 0);  // the CRC still holds for the bytes up to the next record
  CHECK(r.quarantined_segments == 1);
  CHECK(r.truncated_segments == 0);
  CHECK(fs::exists(f.quarantine / "shard_00__seg_00000001.wab"));
  const auto read = read_indexed(f.segment(1));
  REQUIRE(read.size() == 300);
  for (std::size_t i = 0; i < read.size(); ++i) {
    CHECK(read[i].index == i + 1);
    CHECK(read[i].payload == payloads[i]);
  }
}

TEST_CASE("a damaged length and payload lose that one record and keep the indices after it", "[wab][recovery]") {
  shard_fixture f;
  auto image = segment_image(0, 1, {"one", "two", "three", "four"});
  const std::size_t two = segment_header_size + record_header_size + 3;
  image[two] = 0xff;                           // length
  image[two + record_header_size] ^= 0x01;     // payload
  write_file(f.segment(1), image);
  write_file(f.segment(2), segment_image(0, 2, {"newer"}));
  auto r = f.recover();
  CHECK(r.records == 4);
  CHECK(r.damaged_records == 1);
  CHECK(read_indexed(f.segment(1)) == std::vector<indexed>{{1, "one"}, {3, "three"}, {4, "four"}});
}

TEST_CASE("a bad last record of a closed segment is damage and is quarantined", "[wab][recovery]") {
  shard_fixture f;
  auto good = segment_image(0, 1, {"keep"});
  auto bad = good;
  append_record(bad, 0, 1001, bytes_of("hit"));
  bad[bad.size() - 1] ^= 0xff;
  write_file(f.segment(1), bad);
  write_file(f.segment(2), segment_image(0, 2, {"newer"}));
  auto r = f.recover();
  CHECK(r.records == 2);
  CHECK(r.quarantined_segments == 1);
  CHECK(r.truncated_segments == 1);
  CHECK(read_file(f.segment(1)) == good);
  CHECK(read_file(f.quarantine / "shard_00__seg_00000001.wab") == bad);
}

TEST_CASE("records after a wide stretch of garbage are found again", "[wab][recovery]") {
  shard_fixture f;
  // Real timestamps: what keeps a search through random bytes cheap.
  const std::int64_t now = wall_clock_ns();
  auto image = segment_image(0, 1, {"before"}, now, now);
  std::uint32_t x = 12345;
  for (int i = 0; i < 3 * 1024 * 1024; ++i) {
    x = x * 1664525u + 1013904223u;
    image.push_back(static_cast<std::uint8_t>(x >> 24));
  }
  append_record(image, 0, now + 5, bytes_of("after"));
  write_file(f.segment(1), image);
  auto r = f.recover();
  CHECK(r.records == 2);
  CHECK(r.damaged_records == 1);
  CHECK(read_indexed(f.segment(1)) == std::vector<indexed>{{1, "before"}, {3, "after"}});
}

TEST_CASE("a seal claiming more records than its extent can hold is damage and not believed", "[wab][recovery]") {
  shard_fixture f;
  auto made = segment_writer::create(default_file_io(), f.shard.string(), 0, 7, 1);
  REQUIRE(made);
  auto w = std::move(made).value();
  for (const char* p : {"one", "two"}) {
    const auto b = bytes_of(p);
    REQUIRE(w->append({byte_span(b)}, 5).error == 0);
  }
  REQUIRE(w->seal() == 0);
  const auto end = w->size();
  w.reset();
  // The seal slot rewritten, checking, with 2^64 - 1 records over two.
  const auto forged = encode_seal(7, {std::numeric_limits<std::uint64_t>::max(), end});
  {
    std::fstream file(f.segment(7), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(segment_header_size));
    file.write(reinterpret_cast<const char*>(forged.data()), static_cast<std::streamsize>(forged.size()));
  }
  {
    const int fd = default_file_io()->open_existing(f.segment(7).string());
    const auto h = header_of(*default_file_io(), fd);
    default_file_io()->close(fd);
    REQUIRE(h.seal);
    CHECK_FALSE(usable_seal(h, end));  // nobody reading the file believes it
  }
  auto r = f.recover();
  REQUIRE(r.segments.size() == 1);
  CHECK(r.segments[0].records == 2);
  CHECK(r.damaged_seals == 1);
  CHECK(r.damaged_records == 0);  // not 2^64 - 3: how many it stood for is unknown, none is counted as lost
  CHECK(r.quarantined_segments == 1);
  bool said = false;
  for (const auto& e : r.events) said = said || e.what.find("record count its extent cannot hold") != std::string::npos;
  CHECK(said);
  // Sealed again with what it holds.
  const int fd = default_file_io()->open_existing(f.segment(7).string());
  const auto h = header_of(*default_file_io(), fd);
  default_file_io()->close(fd);
  REQUIRE(h.seal);
  CHECK(h.seal->records == 2);
}

TEST_CASE("a seal that ends before records that follow it is not believed", "[wab][recovery]") {
  for (std::uint64_t claimed : {0, 1}) {
    INFO("the seal counts " << claimed << " of 3 records");
    shard_fixture f;
    auto made = segment_writer::create(default_file_io(), f.shard.string(), 0, 3, 1);
    REQUIRE(made);
    auto w = std::move(made).value();
    std::vector<std::uint64_t> ends{w->size()};
    for (const char* p : {"one", "two", "three"}) {
      const auto b = bytes_of(p);
      REQUIRE(w->append({byte_span(b)}, 5).error == 0);
      ends.push_back(w->size());
    }
    w.reset();
    // A seal that checks and whose count fits its extent, but stops early.
    const auto forged = encode_seal(3, {claimed, ends[claimed]});
    {
      std::fstream file(f.segment(3), std::ios::in | std::ios::out | std::ios::binary);
      file.seekp(static_cast<std::streamoff>(segment_header_size));
      file.write(reinterpret_cast<const char*>(forged.data()), static_cast<std::streamsize>(forged.size()));
    }
    auto r = f.recover();
    REQUIRE(r.segments.size() == 1);
    CHECK(r.segments[0].records == 3);
    CHECK(r.segments[0].valid_bytes == ends[3]);
    CHECK(r.damaged_seals == 1);
    CHECK(r.damaged_records == 0);
    const int fd = default_file_io()->open_existing(f.segment(3).string());
    const auto h = header_of(*default_file_io(), fd);
    default_file_io()->close(fd);
    REQUIRE(h.seal);
    CHECK(h.seal->records == 3);
  }
}

TEST_CASE("segments whose names were swapped are delivered as what they hold under their own names",
          "[wab][recovery]") {
  shard_fixture f;
  std::map<std::uint64_t, std::vector<std::string>> written{{1, {"a", "b", "c"}}, {2, {"d", "e"}}};
  for (const auto& [seq, payloads] : written) {
    auto made = segment_writer::create(default_file_io(), f.shard.string(), 0, seq, 1);
    REQUIRE(made);
    auto w = std::move(made).value();
    for (const auto& p : payloads) {
      const auto b = bytes_of(p);
      REQUIRE(w->append({byte_span(b)}, 5).error == 0);
    }
    REQUIRE(w->seal() == 0);
  }
  fs::rename(f.segment(1), f.shard / "tmp");
  fs::rename(f.segment(2), f.segment(1));
  fs::rename(f.shard / "tmp", f.segment(2));
  auto r = f.recover();
  CHECK(r.renamed_segments == 2);
  CHECK(r.quarantined_segments == 0);
  REQUIRE(r.segments.size() == 2);
  CHECK(r.segments[0].sequence == 1);
  CHECK(r.segments[0].records == 3);
  CHECK(r.segments[1].sequence == 2);
  CHECK(r.segments[1].records == 2);
  CHECK(r.records == 5);
  for (std::uint64_t seq : {1, 2}) {
    const int fd = default_file_io()->open_existing(f.segment(seq).string());
    REQUIRE(fd >= 0);
    CHECK(header_of(*default_file_io(), fd).sequence == seq);
    default_file_io()->close(fd);
  }
  // A file whose header names a segment the confirm cursor has passed (a
  // reused file a crash left under its new name) is moved aside as before.
  confirm_cursor past;
  past.sequence = 2;
  past.offset = segment_prefix_size;
  REQUIRE(store_cursor(*default_file_io(), f.shard.string(), past) == 0);
  fs::rename(f.segment(1), f.segment(5));  // segment 1 (delivered) now named 5
  auto again = f.recover();
  CHECK(again.renamed_segments == 0);
  CHECK_FALSE(fs::exists(f.segment(5)));
  CHECK_FALSE(fs::exists(f.segment(1)));
}

TEST_CASE("an unreadable header moves the file to quarantine", "[wab][recovery]") {
  shard_fixture f;
  auto image = segment_image(0, 3, {"r"});
  image[0] = 'X';
  write_file(f.segment(3), image);
  write_file(f.segment(1), segment_image(0, 1, {"ok"}));
  write_file(f.segment(5), byte_buffer{'W', 'W', 'A', 'B', 1, 0, 0, 0, 0, 0});  // a header cut short
  auto r = f.recover();
  REQUIRE(r.segments.size() == 1);
  CHECK(r.segments[0].sequence == 1);
  CHECK(r.quarantined_segments == 2);
  CHECK(r.next_sequence == 6);  // a quarantined number is never reused
  CHECK_FALSE(fs::exists(f.segment(3)));
  CHECK(fs::exists(f.quarantine / "shard_00__seg_00000003.wab"));
  CHECK(fs::exists(f.quarantine / "shard_00__seg_00000005.wab"));
}

TEST_CASE("garbage after valid records that is not zeros is corruption", "[wab][recovery]") {
  shard_fixture f;
  auto image = segment_image(0, 1, {"kept"});
  for (int i = 0; i < 40; ++i) image.push_back(static_cast<std::uint8_t>(0xA5 ^ i));
  // The garbage's "length" field points inside the file, its CRC cannot match.
  image[segment_header_size + record_header_size + 4] = 8;
  image[segment_header_size + record_header_size + 5] = 0;
  image[segment_header_size + record_header_size + 6] = 0;
  image[segment_header_size + record_header_size + 7] = 0;
  write_file(f.segment(1), image);
  auto r = f.recover();
  CHECK(r.records == 1);
  CHECK(r.quarantined_segments == 1);
  CHECK(read_payloads(f.segment(1)) == std::vector<std::string>{"kept"});
}

TEST_CASE("a newest segment whose creation was interrupted is removed and not quarantined", "[wab][recovery]") {
  shard_fixture f;
  write_file(f.segment(1), segment_image(0, 1, {"kept"}));
  write_file(f.segment(2), byte_buffer{});            // created, nothing written yet
  auto r = f.recover();
  CHECK(r.quarantined_segments == 0);
  CHECK_FALSE(fs::exists(f.segment(2)));
  CHECK(r.next_sequence == 3);  // its number is not handed out again
  CHECK(r.records == 1);

  // The same bytes in an older segment are damage: quarantined.
  write_file(f.segment(2), byte_buffer(segment_header_size, 0));
  write_file(f.segment(3), segment_image(0, 3, {"newer"}));
  r = f.recover();
  CHECK(r.quarantined_segments == 1);
  CHECK(fs::exists(f.quarantine / "shard_00__seg_00000002.wab"));
}

namespace {

/// The real file I/O, but one file cannot be opened.
class unopenable_file_io : public posix_file_io {
 public:
  explicit unopenable_file_io(std::string path) : path_(std::move(path)) {}
  int open_existing(const std::string& path) override {
    return path == path_ ? -EIO : posix_file_io::open_existing(path);
  }

 private:
  std::string path_;
};

/// The real file I/O, but one file's reads fail (EIO).
class unreadable_file_io : public posix_file_io {
 public:
  explicit unreadable_file_io(std::string path) : path_(std::move(path)) {}
  int open_existing(const std::string& path) override {
    const int fd = posix_file_io::open_existing(path);
    if (path == path_) fd_ = fd;
    return fd;
  }
  ssize_t pread(int fd, std::uint8_t* data, std::size_t n, std::uint64_t offset) override {
    return fd == fd_ ? -EIO : posix_file_io::pread(fd, data, n, offset);
  }

 private:
  std::string path_;
  int fd_ = -1;
};

/// The real file I/O on a disk with no room left for new files.
class no_room_file_io : public posix_file_io {
 public:
  int create_exclusive(const std::string&) override { return -ENOSPC; }
};

}  // namespace

TEST_CASE("damage found with no room for its quarantine copy is reported and the start goes on", "[wab][recovery]") {
  // A full disk must not need a human: the damaged bytes stay in the segment.
  shard_fixture f;
  auto image = segment_image(0, 2, {"alpha", "bravo", "charlie"});
  image[segment_header_size + record_header_size + 5 + record_header_size] ^= 0x20;  // in "bravo"
  write_file(f.segment(2), image);
  no_room_file_io io;
  const auto r = recover_shard(io, f.shard.string(), f.quarantine.string());
  CHECK(r.records == 2);
  CHECK(r.damaged_records == 1);
  CHECK(r.quarantined_segments == 0);
  REQUIRE(r.events.size() == 1);
  CHECK(r.events[0].level == recovery_event::severity::error);
  const auto where = std::find_if(r.events[0].fields.begin(), r.events[0].fields.end(),
                                  [](const auto& kv) { return kv.first == "quarantine"; });
  REQUIRE(where != r.events[0].fields.end());
  CHECK(where->second.rfind("not copied: ", 0) == 0);
  CHECK(read_file(f.segment(2)) == image);
  CHECK(fs::is_empty(f.quarantine));
}

TEST_CASE("a header the disk cannot read fails the start and leaves the segment where it is", "[wab][recovery]") {
  // An I/O error says nothing about the file: taking it for damage and moving
  // it aside would take its records out of delivery.
  shard_fixture f;
  write_file(f.segment(1), segment_image(0, 1, {"r"}));
  unreadable_file_io io(f.segment(1).string());
  CHECK_THROWS_AS(recover_shard(io, f.shard.string(), f.quarantine.string()), recovery_error);
  CHECK(fs::exists(f.segment(1)));
  CHECK(fs::is_empty(f.quarantine));
}

TEST_CASE("a recovery that fails still reports the repairs it made before", "[wab][recovery]") {
  shard_fixture f;
  auto image = segment_image(0, 1, {"r"});
  image[0] = 'X';
  write_file(f.segment(1), image);                             // moved to quarantine first
  write_file(f.segment(2), segment_image(0, 2, {"ok"}));       // then cannot be opened
  unopenable_file_io io(f.segment(2).string());
  try {
    recover_shard(io, f.shard.string(), f.quarantine.string());
    FAIL("recovery did not fail");
  } catch (const recovery_error& e) {
    CHECK(std::string(e.what()).find("cannot open") != std::string::npos);
    REQUIRE(e.events.size() == 1);
    CHECK(e.events[0].level == recovery_event::severity::error);
    CHECK(e.events[0].what == "segment header unreadable; moved to quarantine");
  }
  CHECK_FALSE(fs::exists(f.segment(1)));  // the repair did happen
}

TEST_CASE("the reader's read-ahead serves records that straddle it or outgrow it", "[wab]") {
  shard_fixture f;
  // Around and beyond the 256 KiB the reader reads at a time.
  const std::vector<std::size_t> sizes{100 * 1024, 200 * 1024, 300 * 1024, 5, 255 * 1024, 1, 700 * 1024, 3};
  std::vector<std::string> payloads;
  for (std::size_t i = 0; i < sizes.size(); ++i) payloads.emplace_back(sizes[i], static_cast<char>('a' + i));
  write_file(f.segment(1), segment_image(0, 1, payloads));
  CHECK(read_payloads(f.segment(1)) == payloads);
  auto r = f.recover();
  CHECK(r.records == payloads.size());
  CHECK(r.truncated_segments == 0);
  CHECK(r.quarantined_segments == 0);
}

TEST_CASE("readers made one read at a time share a lent read-ahead buffer and give back what a large record grew",
          "[wab]") {
  shard_fixture f;
  const std::vector<std::size_t> sizes{64, 100 * 1024, 64, 300 * 1024, 64, 200 * 1024, 64, 64};
  std::vector<std::string> payloads;
  for (std::size_t i = 0; i < sizes.size(); ++i) payloads.emplace_back(sizes[i], static_cast<char>('a' + i));
  write_file(f.segment(1), segment_image(0, 1, payloads));
  auto& io = *default_file_io();
  const int fd = io.open_existing(f.segment(1).string());
  REQUIRE(fd >= 0);
  const auto header = header_of(io, fd);
  const std::uint64_t end = end_of(io, fd);
  read_ahead_buffer lent;
  std::vector<std::string> read;
  std::vector<std::size_t> capacity_after;      // the lent buffer's, after each reader
  std::vector<const std::uint8_t*> storage_after;  // and where its bytes were
  std::uint64_t offset = 0, index = 1;
  // As the drain reads: a new reader per record, resuming where the last stopped.
  while (read.size() < payloads.size()) {
    {
      segment_reader r(io, fd, header, end, offset, index);
      r.use_buffer(lent);
      stored_record rec;
      REQUIRE(r.next(rec));
      read.emplace_back(rec.payload.begin(), rec.payload.end());
      offset = r.valid_end();
      index = r.next_index();
    }
    capacity_after.push_back(lent.capacity);
    storage_after.push_back(lent.bytes.get());
  }
  io.close(fd);
  CHECK(read == payloads);
  // The first read sized it at the read-ahead, never less; the record over
  // 256 KiB grew it, and its reader gave that back.
  CHECK(capacity_after[0] == 256 * 1024);
  CHECK(capacity_after[3] == 0);
  CHECK(capacity_after[4] == 256 * 1024);
  CHECK(std::count(capacity_after.begin(), capacity_after.end(), 256 * 1024) == 7);
  // Until then every reader read into the same bytes.
  CHECK(storage_after[0] != nullptr);
  CHECK(storage_after[1] == storage_after[0]);
  CHECK(storage_after[2] == storage_after[0]);
}

TEST_CASE("reading past damage crosses a zero-filled stretch onto a record whose length starts with zero bytes",
          "[wab][recovery]") {
  shard_fixture f;
  const std::int64_t now = wall_clock_ns();
  auto image = segment_image(0, 1, {"before"}, now, now);
  byte_buffer damaged;
  append_record(damaged, 0, now + 1, bytes_of("hit"));
  damaged[damaged.size() - 1] ^= 0xff;  // its CRC no longer checks
  image.insert(image.end(), damaged.begin(), damaged.end());
  image.resize(image.size() + 1024 * 1024, 0);  // a zero-filled stretch
  // The largest record there is: its length, little-endian, begins with three zero bytes.
  const std::string big(max_record_payload, 'b');
  append_record(image, 0, now + 2, bytes_of(big));
  write_file(f.segment(1), image);
  auto r = f.recover();
  CHECK(r.records == 2);
  CHECK(r.damaged_records == 1);
  const auto read = read_indexed(f.segment(1));
  REQUIRE(read.size() == 2);
  CHECK(read[0] == indexed{1, "before"});
  CHECK(read[1].index == 3);
  CHECK(read[1].payload.size() == max_record_payload);
}
