#include "daemon/startup_checks.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "config/sink_list.hpp"
#include "transport/socket_access.hpp"
#include "runtime/startup_error.hpp"
#include "transport/tls_context.hpp"
#include "sinks/sink.hpp"

namespace weir {

void check_startup_config(const config& cfg) {
  // The TLS files are loaded as the listener will load them: --check-config
  // finds a key that does not match its certificate, or an unreadable CA.
  if (!cfg.listen.tcp.empty()) {
    try {
      make_server_tls_context(cfg.listen.tls);
    } catch (const std::exception& e) {
      throw startup_error(e.what());
    }
  }
  for (const auto* f : {&cfg.cluster.tls.cert, &cfg.cluster.tls.key, &cfg.cluster.tls.ca})
    if (!f->empty() && ::access(f->c_str(), R_OK) != 0)
      throw startup_error("cluster.tls: cannot read " + *f + ": " + std::strerror(errno));
  resolve_socket_access(cfg);  // every user and group named must exist
  for (const auto& sink : configured_sinks(cfg)) {
    try {
      make_sink_factory(with_only_sink(cfg, sink));  // builds nothing that lasts: connections are made per commit slot later
    } catch (const std::exception& e) {
      throw startup_error(cfg.sinks.empty() ? e.what() : "sink " + sink.name + ": " + e.what());
    }
  }
}

}  // namespace weir
