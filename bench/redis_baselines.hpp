#pragma once
// A peer, not a physical limit: Redis with every write fsynced before its
// reply (appendonly yes, appendfsync always) is what many reach for to get a
// durable ack. weir-bench starts its own redis-server on a loopback port in
// the round's directory (the WAB's filesystem) and drives LPUSH the way the
// scenario drives weir: the same clients, the same commands in flight.
#include <cstddef>
#include <string>

#include "bench/baselines.hpp"

namespace weir::bench {

/// Whether redis-server is on PATH (`make bench` installs it).
bool redis_available();

/// `clients` connections, each keeping `pipeline` LPUSH commands of
/// `payload_bytes` in flight, for `seconds`, against a redis-server started
/// in `dir` and stopped after; commands answered per second, all clients
/// together, and the median time from a command's send to its answer.
baseline_result measure_redis_lpush(const std::string& dir, int clients, std::size_t pipeline,
                                    std::size_t payload_bytes, double seconds);

}  // namespace weir::bench
