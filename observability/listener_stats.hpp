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
  std::atomic<std::uint64_t> idle_timeouts{0};  // a frame not whole within listen.read_timeout_ms
  std::atomic<std::uint64_t> evicted{0};        // closed to make room at listen.max_connections
  std::atomic<std::uint64_t> accept_errors{0};  // accept() failed (EMFILE, ENFILE, ENOMEM...)
};

}  // namespace weir
