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

#include <nlohmann/json.hpp>

#include "observability/metrics.hpp"

namespace weir {

class status_report {
 public:
  status_report(metrics& stats, metrics::live_state live);

  /// Records the current totals; call once a second.
  void sample();
  /// Why the daemon should not get traffic, or nullopt when it is ready.
  std::optional<std::string> not_ready() const;
  /// Why delivery is failing, while it retries (the sink down, its
  /// certificate not trusted...): ingest goes on, so this does not make the
  /// daemon unready, but /readyz says it.
  std::optional<std::string> delivery_problem() const;
  std::string json() const;
  /// The last 15 minutes at one point a second, oldest first, as columns:
  /// {"interval_s":1,"t":[unix seconds…],"ingest":[…],"acked":[…],"delivered":[…],
  ///  "p50_ms":[…],"p99_ms":[…],"per_fsync":[…],"wab_bytes":[…],"lag":[…],"oldest_age_s":[…]}.
  /// Served at /api/v1/history, so a reloaded dashboard keeps its charts.
  std::string history_json() const;

 private:
  struct totals {
    std::chrono::steady_clock::time_point at;
    double accepted = 0, acked = 0, delivered = 0, fsyncs = 0, synced = 0;
    std::vector<std::uint64_t> latency;  // cumulative ack-latency buckets, Buffered and Durable together
  };
  totals now() const;
  /// The sink furthest behind, what it has not confirmed and why: who holds the WAB at its cap.
  std::string holding_sink() const;
  /// Each sink: its name, type, health, state, lag and dead letters.
  nlohmann::json sinks_json(std::int64_t now_ns) const;

  /// What one second looked like: rates over it, gauges at its end.
  struct history_point {
    std::int64_t unix_s = 0;
    double ingest = 0, acked = 0, delivered = 0, p50_ms = 0, p99_ms = 0, per_fsync = 0;
    double wab_bytes = 0, lag = 0, oldest_age_s = 0;
  };
  history_point point_between(const totals& older, const totals& newer) const;
  static constexpr std::size_t history_points = 900;

  metrics& stats_;
  metrics::live_state live_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  mutable std::mutex mutex_;
  std::deque<totals> samples_;  // oldest first, up to 61
  std::deque<history_point> history_;  // oldest first, up to history_points
};

/// The sink furthest behind (the most records it has not confirmed), with
/// its health and last error: who holds the WAB when it reaches its cap.
std::string sink_holding_wab(const metrics& stats, const std::vector<metrics::sink_state>& sinks);

}  // namespace weir
