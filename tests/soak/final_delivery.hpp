#pragma once
// The end of a soak: one more start, delivery left to catch up, then a clean
// SIGTERM, so the sink holds everything the WAB held.
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include "soak/soak_daemon.hpp"

namespace weir::soak {

struct final_outcome {
  bool ok = true;
  std::string failure;
  std::chrono::milliseconds catch_up{0};
};

/// Starts the daemon, waits until the sink's row count has not moved for
/// two seconds and `caught_up()` holds (or the sink stalls for 20 s, or
/// `timeout` passes), then stops it with SIGTERM and expects exit status 0.
final_outcome deliver_and_stop(soak_daemon& d, const std::filesystem::path& sink,
                               const std::function<bool()>& caught_up, std::chrono::milliseconds ready_timeout,
                               std::chrono::milliseconds timeout);

}  // namespace weir::soak
