#include "tools/ctl_config.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "config/loader.hpp"

namespace weir::ctl {

std::string apply_daemon_config(options& o, const daemon_config_source& src) {
  config_sources sources;
  sources.file = src.file;
  // WEIR_CTL_CONFIG names another default ("" : none).
  const char* fallback = std::getenv("WEIR_CTL_CONFIG");
  if (!fallback) fallback = packaged_config;
  if (sources.file.empty() && *fallback && ::access(fallback, R_OK) == 0) sources.file = fallback;
  // (Not even knowing it is there — /etc/weir is closed to others — counts.)
  if (sources.file.empty() && *fallback && (::access(fallback, F_OK) == 0 || errno == EACCES)) {
    // The package's configuration is there but not for this user (root and
    // the weir group read it): an application user pushing still finds the
    // package's socket; what needs the rest says why it is missing.
    o.config_unreadable = std::string(fallback) + ": " + std::strerror(EACCES);
    if (::access(packaged_socket, F_OK) == 0) o.socket = packaged_socket;
  }
  if (sources.file.empty() && src.overrides.empty()) return "";
  sources.env = process_environment();
  sources.overrides = src.overrides;
  config c;
  try {
    c = load_config(sources);
  } catch (const config_error& e) {
    return e.what();
  }
  o.data_dir = c.data_dir;
  if (!c.listen.unix_path.empty()) o.socket = c.listen.unix_path;
  o.admin = c.admin.listen;
  o.config_file = sources.file.empty() ? "--set" : sources.file;
  o.max_payload_bytes = c.limits.max_payload_bytes;
  return "";
}

}  // namespace weir::ctl
