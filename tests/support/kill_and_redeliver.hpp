#pragma once
// The exactly-once-by-id check of an SQL sink across a kill -9: push
// durably, wait until the sink has every row, kill the daemon before it
// stores its delivery cursor, start it again and let it deliver what the
// stored cursor had not passed a second time.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace weir::test {

/// `sink_args`: the daemon's --set arguments for the sink; `payload(i)`: the
/// i-th record; `rows()`: the rows the sink holds now. The daemon keeps its
/// cursor for 60 s and seals no segment early, so the second run sends every
/// record again: the test fails unless it catches up, commits all `records`
/// again and dead-letters none (a redelivered row is skipped, not refused).
void kill_and_redeliver(const std::filesystem::path& dir, const std::vector<std::string>& sink_args, int records,
                        const std::function<std::string(int)>& payload, const std::function<std::size_t()>& rows);

}  // namespace weir::test
