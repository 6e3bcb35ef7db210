#pragma once
// Counters the listeners keep; read by the admin server and tests.
#include <atomic>
#include <cstdint>

namespace weir {

struct listener_stats {
  std::atomic<std::uint64_t> accepted{0};
  std::atomic<std::int64_t> active{0};
  std::atomic<std::uint64_t> rejected_over_limit{0};
  std::atomic<std::uint64_t> rejected_peer_uid{0};
  std::atomic<std::uint64_t> idle_timeouts{0};
};

}  // namespace weir
