#pragma once
// What the keep-awake spinners (runtime.keep_awake_us) did; read by the
// metrics scrape and tests.
#include <atomic>
#include <cstdint>

namespace weir {

struct keep_awake_stats {
  unsigned spinners = 0;  // one per usable core, set at start
  /// Time spent spinning, all spinners together (CPU time the process
  /// reports includes it).
  std::atomic<std::int64_t> spun_ns{0};
  /// Times a spinner found client bytes arriving too often to be worth
  /// spinning for and rested instead.
  std::atomic<std::uint64_t> rests{0};
  /// Spells of spinning that have ended.
  std::atomic<std::uint64_t> spells{0};
};

}  // namespace weir
