#include "daemon/startup_checks.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "config/sink_list.hpp"
#include "transport/socket_access.hpp"
#include "runtime/startup_error.hpp"
#include "transport/tls_context.hpp"
#include "sinks/sink.hpp"

namespace weir {

namespace {

/// What the start will need of data_dir, without making it: the directory
/// writable by this user, or, when it does not exist yet, its nearest
/// existing parent (the start makes the rest).
void check_data_dir_writable(const std::string& data_dir) {
  std::filesystem::path at = std::filesystem::absolute(data_dir);
  std::error_code ec;
  while (!std::filesystem::exists(at, ec) && at.has_parent_path() && at != at.parent_path()) at = at.parent_path();
  if (!std::filesystem::is_directory(at, ec))
    throw startup_error("data_dir = " + data_dir + ": " + at.string() + " is not a directory");
  if (::access(at.c_str(), W_OK | X_OK) != 0)
    throw startup_error("data_dir = " + data_dir + ": " + at.string() + " is not writable by this user (" +
                        std::strerror(errno) + "); run as the daemon's user, or give it the directory");
}

}  // namespace

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
  check_data_dir_writable(cfg.data_dir);
  for (const auto& sink : configured_sinks(cfg)) {
    try {
      make_sink_factory(with_only_sink(cfg, sink));  // builds nothing that lasts: connections are made per commit slot later
    } catch (const std::exception& e) {
      throw startup_error(cfg.sinks.empty() ? e.what() : "sink " + sink.name + ": " + e.what());
    }
  }
}

}  // namespace weir
