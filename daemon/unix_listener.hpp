#pragma once
// Accepts producers on the Unix socket. Binding is careful: the socket file
// is created 0600 (its directory made 0700 when missing); a stale socket left
// by a dead daemon is replaced, while a live daemon's socket or any non-socket
// file at the path is refused. At listen.max_connections a new connection
// takes the place of the one stalled longest on its peer; accept failures
// (out of file descriptors) back off instead of spinning.
#include <sys/socket.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <caf/actor.hpp>

#include "messages/connection_protocol.hpp"
#include "daemon/socket_access.hpp"
#include "observability/listener_stats.hpp"

namespace weir {

class socket_session;

struct unix_listener_options {
  std::string path;
  std::size_t max_connections = 256;
  std::chrono::milliseconds read_timeout{30000};
  socket_access access;
};

class unix_listener {
 public:
  using actor_factory = std::function<connection_actor(connection_io_ptr)>;

  unix_listener(boost::asio::io_context& io, unix_listener_options options, listener_stats& stats,
                actor_factory make_actor);
  ~unix_listener();

  /// Binds and listens. Throws startup_error with a one-line reason.
  void open();
  /// Starts accepting on the io_context.
  void start();
  /// Stops accepting and asks every session to finish its owed replies and
  /// close; safe from any thread.
  void wind_down();
  /// Stops accepting and aborts every session; safe from any thread.
  void stop();
  /// Removes the socket file this listener created.
  void remove_socket_file();

 private:
  void accept_next();
  /// Stops accepting, then applies `action` to every live session.
  void close_then(void (socket_session::*action)());
  void on_accepted(boost::asio::local::stream_protocol::socket socket);
  /// The session waiting longest on its peer; null when all wait on the daemon.
  std::shared_ptr<socket_session> longest_stalled();
  /// Warns when the socket's mode lets others open it but `dir` keeps them from reaching it.
  void warn_if_unreachable(const std::string& dir) const;
  /// Whether the socket's access rules let this peer in (unknown credentials: no).
  bool peer_allowed(int fd, const std::optional<ucred>& peer) const;

  boost::asio::io_context& io_;
  unix_listener_options options_;
  listener_stats& stats_;
  actor_factory make_actor_;
  // The acceptor, its timer and the accept loop are used only on this strand:
  // with several io threads, accepting, backing off and closing (wind_down
  // then stop, each posted) would otherwise run at once on one acceptor.
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::local::stream_protocol::acceptor acceptor_;
  boost::asio::steady_timer accept_timer_;  // backs off after a failed accept
  std::chrono::milliseconds accept_backoff_{0};
  std::chrono::steady_clock::time_point next_accept_log_{};
  std::uint64_t accept_errors_unlogged_ = 0;
  bool created_file_ = false;
  std::mutex sessions_mutex_;
  std::uint64_t next_session_id_ = 0;  // touched only on strand_
  std::unordered_map<std::uint64_t, std::weak_ptr<socket_session>> sessions_;
};

}  // namespace weir
