#pragma once
// Starts the weir-server that sits next to weir-bench, in a fresh working
// directory, and stops it with SIGTERM.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>

#include "bench/unix_socket.hpp"

namespace weir::bench {

/// A loopback port nobody listens on now (the kernel's pick for port 0).
std::uint16_t unused_loopback_port();

/// Asks `server_binary --check-config` about `settings` (in a scratch
/// directory under `workdir`, as a round's daemon would start): the
/// daemon's one-line refusal, or "" when it would start.
std::string refused_settings(const std::string& server_binary, const std::string& workdir,
                             const std::map<std::string, std::string>& settings);

class daemon_runner {
 public:
  /// `workdir` must exist; the daemon's data lands in `<workdir>/var`.
  daemon_runner(const std::string& server_binary, const std::string& workdir,
                const std::map<std::string, std::string>& settings);
  ~daemon_runner();
  daemon_runner(const daemon_runner&) = delete;
  daemon_runner& operator=(const daemon_runner&) = delete;

  const std::string& socket_path() const { return socket_.path(); }
  /// "127.0.0.1:PORT" of its admin server (metrics), on a port free at start.
  const std::string& admin_address() const { return admin_; }
  pid_t pid() const { return pid_; }
  /// Its resident memory now (VmRSS), in MiB; 0 when it is not running.
  double rss_mib() const;
  /// From exec to the socket accepting its first connection.
  double startup_seconds() const { return startup_s_; }
  /// SIGTERM, then wait; returns the exit status. Throws when the daemon
  /// has not exited within stop_timeout_s (it is then killed).
  int stop();
  /// SIGKILL, then wait: a crash.
  void kill_hard();

 private:
  static constexpr int stop_timeout_s = 30;
  static constexpr int stop_timed_out = -2;
  /// Sends `signal` and reaps the daemon, killing it past stop_timeout_s.
  int end(int signal);

  pid_t pid_ = -1;
  socket_place socket_;
  std::string admin_;
  std::string log_;
  double startup_s_ = 0;
};

}  // namespace weir::bench
