#pragma once
// Whether a stored confirm cursor can be believed, judged against the
// segments the shard holds. A cursor at segment C is only ever stored once
// C or C - 1 existed, and the segments below it are deleted only after it
// is stored, highest last: so below a true cursor, what earlier segments are
// left end at C - 1, or C itself exists. And within its own segment a true
// cursor names the start of a record, with that record's index, or the end
// of the records with the index after the last. A cursor that fails either
// (written by hand, restored from another shard, lying) would delete or skip
// records it never confirmed: the drain does not trust it, and weir-ctl
// says so (the same function, so they agree).
#include <cstdint>
#include <map>
#include <string>

#include "wab/confirm_cursor.hpp"
#include "wab/file_io.hpp"

namespace weir::wab {

enum class cursor_verdict {
  trusted,
  past_a_gap,       // segments below it end before C - 1, and C is not there
  names_no_record,  // in its own segment, no record starts at its offset with its index
};

/// `records_end`: each segment of the shard by sequence, and where its
/// records end (as recovery left it). Reads the cursor's own segment once.
cursor_verdict judge_cursor(file_io& io, const std::string& shard_dir, const confirm_cursor& cursor,
                            const std::map<std::uint64_t, std::uint64_t>& records_end);

/// What the verdict means, for a log line or weir-ctl ("" when trusted).
std::string why_untrusted(cursor_verdict verdict);

}  // namespace weir::wab
