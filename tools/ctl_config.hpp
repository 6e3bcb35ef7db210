#pragma once
// weir-ctl reads the daemon's own configuration (--config FILE, or
// /etc/weir/weir.yaml when it is there) for the socket, the admin address
// and the data directory, with the daemon's parser and the same WEIR_*
// environment and --set rules, so that an operator does not repeat paths
// the daemon already knows. Explicit flags still win.
#include <string>
#include <vector>

#include "tools/ctl_commands.hpp"

namespace weir::ctl {

inline constexpr const char* packaged_config = "/etc/weir/weir.yaml";
inline constexpr const char* packaged_socket = "/run/weir/weir.sock";  // its listen.unix

struct daemon_config_source {
  std::string file;  // --config; empty: $WEIR_CTL_CONFIG ("" : none), else packaged_config, when readable
  std::vector<std::string> overrides;  // --set key=value
};

/// Fills `o` from the daemon's configuration. Returns "" or a one-line
/// reason it cannot be read (exit 2). A packaged config that is absent or
/// that this user may not read is skipped quietly: weir-ctl then has its
/// defaults.
std::string apply_daemon_config(options& o, const daemon_config_source& src);

}  // namespace weir::ctl
