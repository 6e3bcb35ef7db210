#pragma once
// Runs one scenario: for every payload size, batch size and backlog it
// names, baseline and scenario rounds alternate (the order flipped each
// round, so a machine drifting over minutes moves both alike), and the
// medians with their ranges become one BENCH result.
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/scenario.hpp"

namespace weir::bench {

struct suite_options {
  std::string workdir = "var/bench";
  std::string socket;            // a running daemon instead of one per round
  std::string server_binary;     // weir-server
  int repeats = 3;
};

/// Calls `emit` with each result as it is measured; progress goes to stderr.
void run_scenario(const scenario& sc, const suite_options& options,
                  const std::function<void(const nlohmann::json&)>& emit);

/// The human summary of one result (stdout, below its BENCH line).
std::string summarise(const nlohmann::json& result);

}  // namespace weir::bench
