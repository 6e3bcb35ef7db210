#pragma once
// The daemon's own counts, read from its /metrics, that say how well it
// batched — records per fdatasync (group commit) and records per sink
// commit — and what it cost: its CPU time.
// Reading them costs the daemon a scrape, not the sink a query.
#include <cstdint>
#include <string>
#include <string_view>

namespace weir::bench {

struct daemon_counters {
  double synced_records = 0, fsyncs = 0;           // weir_wab_group_commit_records, every shard
  double committed_records = 0, sink_commits = 0;  // weir_sink_commit_records_total / _duration_seconds
  double acked_records = 0;                        // weir_records_ack_total, every tier
  double fsync_seconds = 0, fsync_count = 0;       // weir_wab_fsync_duration_seconds _sum / _count
  double cpu_seconds = 0;                          // process_cpu_seconds_total
};

/// Sum of every sample of `name` (all label sets) in a Prometheus text exposition.
double metric_total(std::string_view exposition, std::string_view name);

/// Scrapes http://<admin>/metrics; throws when the daemon does not answer.
daemon_counters read_daemon_counters(const std::string& admin);

/// `n` over `d`, or 0 when nothing was counted.
inline double per(double n, double d) { return d > 0 ? n / d : 0; }

}  // namespace weir::bench
