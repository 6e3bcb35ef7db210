#include "wab/cursor_trust.hpp"

#include <algorithm>

#include "wab/segment_reader.hpp"
#include "wab/wall_clock.hpp"

namespace weir::wab {

namespace {

bool fits_its_segment(file_io& io, const std::string& shard_dir, const confirm_cursor& at, std::uint64_t records_end) {
  const int fd = io.open_existing(shard_dir + "/" + segment_file_name(at.sequence));
  if (fd < 0) return true;  // not readable now: the drain waits on it as it does for any segment
  bool fits = true;  // a header recovery could not read is quarantined there, not judged here
  if (const auto header = read_segment_header(io, fd)) {
    // An offset before the first record is the segment's start (a cursor
    // moved onto a new segment names no record offset yet).
    const std::uint64_t offset = std::max(at.offset, header.value().data_start());
    segment_reader reader(io, fd, header.value(), records_end, 0, 1,
                          resync_window_for(header.value(), wall_clock_ns()));
    std::uint64_t next_index = 1;
    stored_record r;
    while (reader.next(r) && r.offset < offset) next_index = r.index + 1;
    if (reader.stop() == scan_stop::none) fits = r.offset == offset && r.index == at.index;
    else fits = offset == std::max(reader.valid_end(), header.value().data_start()) && at.index == next_index;
  }
  io.close(fd);
  return fits;
}

}  // namespace

cursor_verdict judge_cursor(file_io& io, const std::string& shard_dir, const confirm_cursor& cursor,
                            const std::map<std::uint64_t, std::uint64_t>& records_end) {
  if (records_end.empty()) return cursor_verdict::trusted;
  const auto c = cursor.sequence;
  const auto own = records_end.find(c);
  const auto below = records_end.lower_bound(c);
  const bool fits = own == records_end.end() || fits_its_segment(io, shard_dir, cursor, own->second);
  if (below == records_end.begin()) return fits ? cursor_verdict::trusted : cursor_verdict::names_no_record;
  if (own == records_end.end()) return std::prev(below)->first + 1 == c ? cursor_verdict::trusted : cursor_verdict::past_a_gap;
  return fits ? cursor_verdict::trusted : cursor_verdict::past_a_gap;
}

std::string why_untrusted(cursor_verdict verdict) {
  switch (verdict) {
    case cursor_verdict::trusted: return "";
    case cursor_verdict::past_a_gap: return "the confirm cursor points past records it never confirmed";
    case cursor_verdict::names_no_record: return "the confirm cursor names no record of its segment";
  }
  return "";
}

}  // namespace weir::wab
