#pragma once
// Wires a weir-server process together: data directory and lock, actor
// system, listeners, signal handling and orderly shutdown.
#include <functional>

#include "config/config.hpp"

namespace weir {

/// Runs until SIGTERM or SIGINT; on SIGHUP reads the configuration again
/// with `reread` (throwing config_error when it is invalid) and applies what
/// can change live (daemon/config_reload.hpp). Returns the process exit
/// status; throws startup_error when the daemon cannot start.
int run_daemon(const config& cfg, std::function<config()> reread = {});

}  // namespace weir
