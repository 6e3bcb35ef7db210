#pragma once
// A pinned seed: one file per seed in tests/sim/regressions/, e.g.
//
//   # caught: <what this seed found, or which fault path it pins>
//   # known-bug: <invariant>   only while the bug it shows is open: the seed
//   #                          is then replayed under Catch2's [!mayfail], and
//   #                          sweeps excuse failures of that invariant
//   seed=27
//   steps=250                  optional
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/sim_config.hpp"

namespace weir::sim {

struct regression_seed {
  std::filesystem::path file;
  std::uint64_t seed = 0;
  unsigned steps = 250;
  sync_wiring wiring = sync_wiring::separate;  // "wiring=daemon": found with --daemon-wiring
  std::string caught;     // the "# caught:" line
  std::string known_bug;  // the invariant of an open bug, or empty
};

/// nullopt, with `error` set, for a file without a valid seed line.
std::optional<regression_seed> read_regression(const std::filesystem::path& file, std::string& error);
/// Every regular file of `dir`, sorted by name.
std::vector<std::filesystem::path> regression_files(const std::filesystem::path& dir);

}  // namespace weir::sim
