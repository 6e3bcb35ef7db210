#pragma once
// Drives producers against a daemon socket: each producer is one connection
// on its own thread, keeping `pipeline` frames in flight and timing every
// reply from its frame's send.
#include <cstdint>
#include <string>
#include <vector>

#include "bench/scenario.hpp"

namespace weir::bench {

struct load_result {
  double seconds = 0;
  std::uint64_t records = 0;  // records acked
  std::uint64_t frames = 0;   // replies received
  std::uint64_t refused = 0;  // records not acked: refused, or never answered
  std::vector<double> latency_us;  // per frame, send to reply
  int lost_producers = 0;  // producers the daemon left before the load ended (run_load throws then)
  std::string lost_why;    // what the first of them saw
};

load_result run_load(const std::string& socket_path, const load_spec& spec);

/// The q-quantile (0..1) of `v`, which it sorts.
double quantile(std::vector<double>& v, double q);

}  // namespace weir::bench
