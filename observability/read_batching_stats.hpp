#pragma once
// How the io threads read the Unix sockets (runtime.read_batching); read by
// the metrics scrape, the status page and tests.
#include <atomic>
#include <cstdint>

namespace weir {

struct read_batching_stats {
  std::atomic<bool> batching{false};          // sockets are read through the epoll set now
  std::atomic<std::uint64_t> to_set{0};       // times sessions were switched to the set
  std::atomic<std::uint64_t> to_reactor{0};   // and back to Asio's reactor
  std::atomic<std::uint64_t> wakeups{0};      // times the set woke an io thread
  std::atomic<std::uint64_t> ready{0};        // sockets it reported ready, all wake-ups together
};

}  // namespace weir
