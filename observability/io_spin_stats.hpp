#pragma once
// What the io thread's polling after Buffered acks (runtime.buffered_spin_us)
// cost; read by the metrics scrape, the status page and tests.
#include <atomic>
#include <cstdint>

#include <sys/types.h>

namespace weir {

struct io_spin_stats {
  std::atomic<std::uint64_t> spun_ns{0};   // wall time spent polling while nothing was there to run
  std::atomic<std::uint64_t> caught{0};    // polling windows that ended with a handler to run
  std::atomic<std::uint64_t> expired{0};   // polling windows that ended with nothing: it slept
  std::atomic<pid_t> thread{0};            // the polling io thread's id (for the CPU placement)
};

}  // namespace weir
