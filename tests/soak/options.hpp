#pragma once
// weir-soak's command line.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace weir::soak {

struct options {
  std::filesystem::path server;          // the weir-server binary
  std::optional<std::filesystem::path> dir;  // fresh work directory; a temporary one when absent
  bool keep = false;                     // keep the work directory after a clean run
  std::uint32_t cycles = 1000;
  std::uint64_t seed = 0;
  bool seed_given = false;
  std::uint32_t producers = 4;
  std::uint32_t shards = 4;
  std::string segment_bytes = "64KiB";
  std::vector<std::string> extra_settings;  // more --set KEY=VALUE for the daemon
  std::chrono::milliseconds min_load{50}, max_load{400};
  std::chrono::milliseconds reply_timeout{1000};
  std::chrono::milliseconds ready_timeout{30000};
  std::chrono::milliseconds catch_up_timeout{1800000};  // a cap; a sink making no progress for 20 s ends it first
};

/// Parses argv; prints usage and exits on --help or a bad flag.
options parse_options(int argc, char** argv);

}  // namespace weir::soak
