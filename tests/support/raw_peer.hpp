#pragma once
// A hostile peer for live tests: a non-blocking Unix-socket connection that
// sends as much as the daemon takes, never reads unless asked, and can tell
// whether the daemon closed it. Plus what a test needs to watch the daemon's
// process: resident memory, CPU time, open-file limit.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace weir::test {

class raw_peer {
 public:
  explicit raw_peer(const std::string& socket_path);
  ~raw_peer();
  raw_peer(const raw_peer&) = delete;
  raw_peer& operator=(const raw_peer&) = delete;
  raw_peer(raw_peer&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  raw_peer& operator=(raw_peer&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }

  bool connected() const { return fd_ >= 0; }
  /// Sends what the socket takes without blocking; bytes taken, or -1 once
  /// the daemon has closed the connection.
  long send_some(const std::uint8_t* data, std::size_t n);
  /// Keeps sending `data` from `offset` until all of it went, the daemon
  /// stops taking bytes for `stall`, or it closes; returns the new offset.
  std::size_t send_until_stalled(const std::vector<std::uint8_t>& data, std::size_t offset,
                                 std::chrono::milliseconds stall);
  /// Whether the daemon closed the connection (reads and discards what is there).
  bool closed_by_daemon();
  /// Waits up to `limit` for the daemon to close the connection.
  bool wait_closed(std::chrono::milliseconds limit);

 private:
  int fd_ = -1;
};

/// Resident set size of `pid` in bytes (VmRSS), 0 if unknown.
std::uint64_t resident_bytes(pid_t pid);
/// User plus system CPU time `pid` has used.
std::chrono::milliseconds cpu_time(pid_t pid);
/// Sets `pid`'s soft RLIMIT_NOFILE (the hard one stays); false on failure.
bool set_open_file_limit(pid_t pid, std::uint64_t soft);
/// Open descriptors of `pid`.
std::size_t open_files(pid_t pid);

/// A blocking TCP connection to 127.0.0.1:`port` (-1 on failure), for abusing
/// the admin server; sends never block the test for long (1 s timeout).
int tcp_connect(std::uint16_t port);
void tcp_send(int fd, const std::string& bytes);
void tcp_close(int fd);

}  // namespace weir::test
