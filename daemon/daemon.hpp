#pragma once
// Wires a weir-server process together: data directory and lock, actor
// system, listeners, signal handling and orderly shutdown.
#include "config/config.hpp"

namespace weir {

/// Runs until SIGTERM or SIGINT. Returns the process exit status; throws
/// startup_error when the daemon cannot start.
int run_daemon(const config& cfg);

}  // namespace weir
