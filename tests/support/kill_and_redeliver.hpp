#pragma once
// The exactly-once-by-id check of an SQL sink across a kill -9: push
// durably, wait until the sink has every row, kill the daemon before it
// stores its delivery cursor, start it again and let it deliver what the
// stored cursor had not passed a second time.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace weir::test {

struct redelivery {
  bool caught_up = false;       // the second run delivered everything it had to
  std::uint64_t committed = 0;  // records the second run committed (again)
  std::uint64_t dead_lettered = 0;
  std::string log;              // the second run's log, for a failure's message
};

/// `sink_args`: the daemon's --set arguments for the sink; `payload(i)`: the
/// i-th record; `rows()`: the rows the sink holds now. The daemon keeps its
/// cursor for 60 s and seals no segment early, so the second run sends every
/// record again.
redelivery kill_and_redeliver(const std::filesystem::path& dir, const std::vector<std::string>& sink_args, int records,
                              const std::function<std::string(int)>& payload,
                              const std::function<std::size_t()>& rows);

}  // namespace weir::test
