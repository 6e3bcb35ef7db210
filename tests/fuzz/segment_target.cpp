// segment: the WAB segment reader and startup recovery on arbitrary files.
//
// The input becomes two segments of one shard directory: seg_00000001.wab is
// the bytes as they are (the fuzzer owns the header too), seg_00000002.wab is
// a valid header followed by the bytes (the fuzzer owns the records). Both
// are read to the end, recovered, read again and recovered again: recovery
// keeps at least what a plain read finds, cuts nothing a plain read could
// still reach, and leaves a shard the next recovery does not change.
#include <map>
#include <stdexcept>
#include <string>

#include "wab/file_io.hpp"
#include "wab/recovery.hpp"
#include "wab/segment_format.hpp"
#include "wab/segment_reader.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/fuzz_targets.hpp"

using namespace weir;
using namespace weir::wab;

namespace {

// Recovery judges record timestamps against "now"; a fixed one keeps every
// input's verdict the same on every run, so a saved input replays as found.
constexpr std::int64_t fixed_now_ns = 1'800'000'000'000'000'000;  // 2027-01-15

/// What a plain read (no resync) of one segment file found.
struct scan {
  std::uint64_t size = 0, records = 0, valid_end = 0;
  std::uint64_t end = 0;  // where the file's records end: its size, or what its seal says
  bool sealed = false;
};

/// Closes the descriptor even when a check throws, so a long run keeps none open.
struct open_file {
  file_io& io;
  int fd;
  ~open_file() {
    if (fd >= 0) io.close(fd);
  }
};

/// Reads every record of `path`, checking each against the file's bounds.
scan read_segment(file_io& io, const std::string& path) {
  open_file f{io, io.open_existing(path)};
  if (f.fd < 0) throw std::runtime_error("cannot open " + path);
  const std::int64_t size = io.size(f.fd);
  WEIR_FUZZ_CHECK(size >= 0);
  scan s;
  s.size = static_cast<std::uint64_t>(size);
  // A mutated header still has records to classify: read them as the writer made them.
  const auto decoded = read_segment_header(io, f.fd);
  const segment_header header = decoded ? decoded.value() : segment_header{.shard = 0, .sequence = 1, .created_at_ns = 1};
  const std::uint64_t end = records_end(header, s.size);
  s.end = end;
  s.sealed = usable_seal(header, s.size).has_value();
  segment_reader reader(io, f.fd, header, end);
  std::uint64_t expected_offset = header.data_start();
  while (auto r = reader.next()) {
    // Records are back to back, numbered from 1, and never leave the file.
    WEIR_FUZZ_CHECK(r->index == s.records + 1);
    WEIR_FUZZ_CHECK(r->offset == expected_offset);
    WEIR_FUZZ_CHECK(!r->payload.empty() && r->payload.size() <= max_record_payload);
    expected_offset = r->offset + record_header_size + r->payload.size();
    WEIR_FUZZ_CHECK(expected_offset <= s.size);
    ++s.records;
  }
  WEIR_FUZZ_CHECK(reader.stop() != scan_stop::none && reader.stop() != scan_stop::io_error);
  WEIR_FUZZ_CHECK(!reader.next());  // a stopped reader stays stopped
  WEIR_FUZZ_CHECK(reader.records_read() == s.records);
  WEIR_FUZZ_CHECK(reader.valid_end() == expected_offset);
  // Shorter than a header: recovery quarantines such a file before reading records.
  if (s.size >= header.data_start()) WEIR_FUZZ_CHECK(reader.valid_end() <= s.size);
  if (reader.stop() == scan_stop::end_of_file) WEIR_FUZZ_CHECK(reader.valid_end() >= end);
  s.valid_end = reader.valid_end();
  return s;
}

}  // namespace

int weir_fuzz_segment(const std::uint8_t* data, std::size_t size) {
  static const auto io = default_file_io();
  // recover_shard names quarantine copies after the shard directory's name.
  const auto shard_dir = fuzz::fresh_dir(shard_dir_name(0));
  const auto quarantine_dir = fuzz::fresh_dir("quarantine");
  const byte_span bytes(data, size);

  const std::string as_is = (shard_dir / segment_file_name(1)).string();
  fuzz::write_file(as_is, bytes);
  const auto header = encode_segment_prefix({.shard = 0, .sequence = 2, .created_at_ns = 1});
  byte_buffer framed(header.begin(), header.end());
  append_bytes(framed, bytes);
  const std::string behind_header = (shard_dir / segment_file_name(2)).string();
  fuzz::write_file(behind_header, framed);

  const std::map<std::uint64_t, scan> before = {{1, read_segment(*io, as_is)}, {2, read_segment(*io, behind_header)}};

  const shard_recovery first = recover_shard(*io, shard_dir.string(), quarantine_dir.string(), fixed_now_ns);
  WEIR_FUZZ_CHECK(first.next_sequence == 3);
  // A valid header is never quarantined.
  WEIR_FUZZ_CHECK(!first.segments.empty() && first.segments.back().sequence == 2);
  std::uint64_t records = 0;
  for (const auto& seg : first.segments) {
    const scan& plain = before.at(seg.sequence);
    records += seg.records;
    // A sealed segment is taken at its seal's word, unread (the drain checks
    // its records as it reads them): it stays as it was.
    if (plain.sealed) {
      WEIR_FUZZ_CHECK(seg.valid_bytes == plain.end);
      continue;
    }
    // Recovery may read past damage, never stop short of what a plain read finds.
    WEIR_FUZZ_CHECK(seg.records >= plain.records && seg.valid_bytes >= plain.valid_end);
    if (seg.records == plain.records) WEIR_FUZZ_CHECK(seg.valid_bytes == plain.valid_end);
    // The repaired file's records end where recovery says (cut there, or
    // sealed there), and a plain read of it finds exactly what it found
    // before the repair: nothing was cut into.
    const scan after = read_segment(*io, seg.path);
    WEIR_FUZZ_CHECK(after.end == seg.valid_bytes);
    WEIR_FUZZ_CHECK(after.records == plain.records && after.valid_end == plain.valid_end);
  }
  WEIR_FUZZ_CHECK(records == first.records);

  // A repaired shard needs no further repair: the next start finds the same.
  const shard_recovery second = recover_shard(*io, shard_dir.string(), quarantine_dir.string(), fixed_now_ns);
  WEIR_FUZZ_CHECK(second.truncated_segments == 0);
  WEIR_FUZZ_CHECK(second.segments.size() == first.segments.size());
  for (std::size_t i = 0; i < second.segments.size(); ++i) {
    WEIR_FUZZ_CHECK(second.segments[i].sequence == first.segments[i].sequence);
    WEIR_FUZZ_CHECK(second.segments[i].records == first.segments[i].records);
    WEIR_FUZZ_CHECK(second.segments[i].valid_bytes == first.segments[i].valid_bytes);
  }
  return 0;
}
