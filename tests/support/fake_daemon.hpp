#pragma once
// Stand-ins for a daemon that misbehaves, for libweir-client's tests: a
// listener that never accepts (a hung daemon, a full backlog), and one that
// answers each frame with bytes the test wrote (a daemon out of step).
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace weir::test {

/// A Unix socket nobody accepts on: the kernel queues connections in its
/// backlog, and nothing ever reads from or answers them.
class silent_unix_listener {
 public:
  explicit silent_unix_listener(std::string path);
  ~silent_unix_listener();
  silent_unix_listener(const silent_unix_listener&) = delete;
  silent_unix_listener& operator=(const silent_unix_listener&) = delete;

  /// Connects (and keeps) peers until the backlog is full: the next connect
  /// then waits for room that never comes.
  void fill_backlog();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::vector<int> queued_;
};

/// A TCP socket on 127.0.0.1 nobody accepts on: the kernel completes the
/// TCP handshake into the backlog, and nothing ever reads or answers (a TLS
/// ClientHello goes unanswered).
class silent_tcp_listener {
 public:
  silent_tcp_listener();
  ~silent_tcp_listener();
  silent_tcp_listener(const silent_tcp_listener&) = delete;
  silent_tcp_listener& operator=(const silent_tcp_listener&) = delete;

  std::uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

/// A fake daemon on a Unix socket: it accepts one connection, reads each v1
/// frame sent on it and answers it with the next of `replies`, raw bytes
/// sent as they are (garbage included). After the last it reads on and
/// answers nothing, until destroyed.
class scripted_daemon {
 public:
  /// With `close_after`, it reads that many frames without answering, waits
  /// for the next one to start arriving, then answers them all and closes
  /// the connection while the client is still sending.
  scripted_daemon(std::string path, std::vector<std::vector<std::uint8_t>> replies,
                  std::size_t close_after = SIZE_MAX);
  ~scripted_daemon();
  scripted_daemon(const scripted_daemon&) = delete;
  scripted_daemon& operator=(const scripted_daemon&) = delete;

  const std::string& path() const { return path_; }
  /// Frames read so far.
  std::size_t frames_read() const { return frames_read_.load(); }
  /// Every frame read, once the client has closed its connection (waits
  /// for that; close it first).
  std::size_t frames_read_until_closed();

 private:
  void serve();
  /// Waits for `fd` to be readable; false once the test is done with this daemon.
  bool wait_readable(int fd);
  /// Reads exactly `n` bytes; false on EOF or when stopped.
  bool read_exact(int fd, std::uint8_t* out, std::size_t n);
  bool skip_frame(int fd);

  std::string path_;
  std::vector<std::vector<std::uint8_t>> replies_;
  std::size_t close_after_;
  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};  // written to by the destructor: wakes serve()
  std::atomic<std::size_t> frames_read_{0};
  std::thread thread_;
};

}  // namespace weir::test
