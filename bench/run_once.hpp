#pragma once
// One measurement of a scenario (a fresh daemon, the load, for delivery the
// wait until the sink holds every acked record) and one of its physical
// reference. weir-bench alternates them and repeats both.
#include <cstdint>
#include <string>
#include <vector>

#include "bench/scenario.hpp"

namespace weir::bench {

/// One point of a sustained run: the interval that ended at t_s.
struct series_point {
  double t_s = 0;
  double records_per_s = 0;  // acked in the interval
  double fsync_ms = 0;       // mean WAB fdatasync in the interval
  double rss_mib = 0;        // the daemon's resident memory at t_s
};

struct sample {
  double records_per_s = 0;  // for a baseline: its operations per second x records per operation
  double p50_us = 0, p99_us = 0, p999_us = 0;
  std::uint64_t records = 0, refused = 0;
  double catch_up_s = 0;  // delivery: after the last ack until the sink held everything
  double acked_per_s = 0;  // delivery: records acked per second while the load ran
  double startup_s = 0;   // recovery: exec to the socket accepting, after kill -9
  std::uint64_t backlog_bytes = 0;  // recovery: WAB bytes the restart found
  double records_per_fsync = 0;   // Durable records each WAB fdatasync released (weir-server only)
  // Ingest: the daemon's CPU time from the load's start (once the warm-up's
  // records are delivered) until its sink has taken every acked record (at
  // most 10 s after the load), per record acked in the load; weir-server only.
  // Steadier than a rate on a shared machine: it says what a change saved.
  double daemon_cpu_us_per_record = 0;
  double records_per_commit = 0;  // delivery: records each sink commit stored
  double records_per_db_commit = 0;  // PostgreSQL delivery: rows over pg_stat_database commits
  double delivery_p50_us = 0, delivery_p99_us = 0;  // latency: push to arrival at the endpoint
  double idle_rss_mib = 0;  // startup: resident memory after load.seconds idle
  double peak_rss_mib = 0;  // sustained: the highest sample
  std::uint64_t sink_refusals = 0;  // outage: requests the endpoint answered 503
  std::vector<series_point> series;  // sustained
};

/// One round's ratio: the scenario over the baseline measured next to it
/// (for latency, the baseline's time over the scenario's: 1 is the floor);
/// 0 where the measure has no baseline.
double round_ratio(const scenario& sc, const sample& run, const sample& base);

/// `socket` empty: start weir-server (`server_binary`) in `dir`.
sample run_scenario_once(const scenario& sc, const load_spec& spec, const std::string& dir,
                         const std::string& server_binary, const std::string& socket);

/// `server_binary`: for the durable_tier baseline, which starts a cluster too.
sample run_baseline_once(const scenario& sc, const load_spec& spec, const std::string& dir,
                         const std::string& server_binary);

}  // namespace weir::bench
