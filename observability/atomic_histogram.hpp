#pragma once
// A histogram that per-record code can update with no lock and no
// allocation: one relaxed atomic increment per observation. prometheus-cpp's
// Histogram takes a mutex on every Observe, which is fine once per fsync and
// not once per record.
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include <prometheus/client_metric.h>

namespace weir {

class atomic_histogram {
 public:
  /// Upper bounds in seconds, increasing; +Inf is implied.
  explicit atomic_histogram(std::vector<double> bounds);

  void observe(double seconds);
  /// A consistent-enough copy for a scrape (counts only grow).
  prometheus::ClientMetric snapshot(std::vector<prometheus::ClientMetric::Label> labels) const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;  // bounds_.size() + 1 (the +Inf bucket)
  std::atomic<std::uint64_t> sum_ns_{0};
};

/// 50 µs .. 10 s, roughly ×2.5 apart: ack and delivery latencies.
std::vector<double> latency_buckets();

}  // namespace weir
