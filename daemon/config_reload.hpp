#pragma once
// SIGHUP: the configuration is read again from the same sources (file,
// environment, --set) and what can change in a running daemon changes; the
// rest is named in the log as waiting for a restart. A configuration that no
// longer validates changes nothing.
#include <functional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "sinks/sink.hpp"

namespace weir {

/// Keys whose effective value differs between `a` and `b`, in schema order.
std::vector<std::string> changed_keys(const config& a, const config& b);

/// Keys a running daemon takes on reload.
bool reloads_live(const std::string& key);

/// Reads the configuration with `reread` (which throws config_error when it
/// is invalid), applies what changes live to `running` and the logger, has
/// `reload_secrets` read the sink's secret files again and `reload_tls`
/// (when listen.tcp is served) the TLS certificate, key and client CA at
/// the paths now configured ("" back when they are in use, else why not),
/// `reload_cluster_tls` (in a cluster) cluster.tls the same way, and logs
/// what it did and what needs a restart.
void reload_config(config& running, const std::function<config()>& reread,
                   const std::function<sink_factory::secret_reload()>& reload_secrets,
                   const std::function<std::string(const config::tls_files&)>& reload_tls = {},
                   const std::function<std::string(const config&)>& reload_cluster_tls = {});

}  // namespace weir
