#pragma once
// Where runtime.cpu_placement has put the daemon's threads; read by the
// metrics scrape, the status page and tests.
#include <atomic>
#include <cstdint>

namespace weir {

struct cpu_placement_stats {
  int gather_cpu = -1;  // the CPU threads gather on; set at start
  std::atomic<bool> gathered{false};
  std::atomic<std::uint64_t> gatherings{0};  // times the threads were gathered
  std::atomic<std::uint64_t> spreads{0};     // times they were spread out again
};

}  // namespace weir
