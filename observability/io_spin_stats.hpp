#pragma once
// What the io thread's polling after Buffered acks (runtime.buffered_spin_us)
// cost; read by the metrics scrape, the status page and tests.
#include <atomic>
#include <cstdint>

namespace weir {

struct io_spin_stats {
  std::atomic<std::uint64_t> spun_ns{0};   // time spent polling sockets that had nothing
  std::atomic<std::uint64_t> caught{0};    // polls that found work (a sleep and a wake-up saved)
  std::atomic<std::uint64_t> expired{0};   // polling windows that ended with nothing found
};

}  // namespace weir
