#pragma once
// The state of one simulated run that outlives the daemon's crashes: the
// run's shape, the fault plan and the simulated disk, the ledger of what was
// sent and answered, the producers, the clock of steps and lives, and the
// first invariant that failed.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/daemon_life.hpp"
#include "sim/durable_view.hpp"
#include "sim/fault_plan.hpp"
#include "sim/ledger.hpp"
#include "sim/sim_config.hpp"
#include "sim/sim_file_io.hpp"

namespace weir::sim {

struct producer_state {
  std::uint16_t shard = 0;  // pinned for life, as a connection is
  std::uint64_t next_seq = 1;
  std::uint64_t next_tag = 1;
};

struct failure {
  unsigned step = 0;
  std::string invariant;
  std::string details;
};

struct sim_world {
  sim_config cfg;
  sim_paths paths;
  fault_plan plan;
  std::shared_ptr<sim_file_io> io;
  std::unique_ptr<durable_view> view;
  ledger book;
  std::vector<producer_state> producers;
  unsigned step = 0;
  unsigned life = 0;
  unsigned crashes = 0;
  /// The daemon is alive: a reply sent or a commit made now really happened.
  bool accepting = false;
  std::optional<failure> failed;

  /// Records the first violation; later ones are consequences.
  void fail(std::string invariant, std::string details) {
    if (!failed) failed = failure{step, std::move(invariant), std::move(details)};
  }
};

}  // namespace weir::sim
