#pragma once
// One measurement of a scenario (a fresh daemon, the load, for delivery the
// wait until the sink holds every acked record) and one of its physical
// reference. weir-bench alternates them and repeats both.
#include <cstdint>
#include <string>

#include "bench/scenario.hpp"

namespace weir::bench {

struct sample {
  double records_per_s = 0;  // for a baseline: its operations per second x records per operation
  double p50_us = 0, p99_us = 0, p999_us = 0;
  std::uint64_t records = 0, refused = 0;
  double catch_up_s = 0;  // delivery: after the last ack until the sink held everything
  double acked_per_s = 0;  // delivery: records acked per second while the load ran
  double startup_s = 0;   // recovery: exec to the socket accepting, after kill -9
  std::uint64_t backlog_bytes = 0;  // recovery: WAB bytes the restart found
  double records_per_fsync = 0;   // Durable records each WAB fdatasync released (weir-server only)
  double records_per_commit = 0;  // delivery: records each sink commit stored
};

/// `socket` empty: start weir-server (`server_binary`) in `dir`.
sample run_scenario_once(const scenario& sc, const load_spec& spec, const std::string& dir,
                         const std::string& server_binary, const std::string& socket);

/// `server_binary`: for the durable_tier baseline, which starts a cluster too.
sample run_baseline_once(const scenario& sc, const load_spec& spec, const std::string& dir,
                         const std::string& server_binary);

}  // namespace weir::bench
