#pragma once
// The JSON behind GET /api/v1/status and the dashboard: where every shard
// stands, what delivery is doing, and rates over the last 1, 10 and 60
// seconds. Rates come from totals sampled once a second (sample()), so a
// status request never walks anything big.
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "observability/metrics.hpp"

namespace weir {

class status_report {
 public:
  status_report(metrics& stats, metrics::live_state live);

  /// Records the current totals; call once a second.
  void sample();
  /// Why the daemon should not get traffic, or nullopt when it is ready.
  std::optional<std::string> not_ready() const;
  std::string json() const;

 private:
  struct totals {
    std::chrono::steady_clock::time_point at;
    double accepted = 0, acked = 0, delivered = 0, fsyncs = 0, synced = 0;
    std::vector<std::uint64_t> latency;  // cumulative ack-latency buckets, Buffered and Durable together
  };
  totals now() const;

  metrics& stats_;
  metrics::live_state live_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  mutable std::mutex mutex_;
  std::deque<totals> samples_;  // oldest first, up to 61
};

}  // namespace weir
