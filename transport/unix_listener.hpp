#pragma once
// Accepts producers on the Unix socket. Binding is careful: the socket file
// is created 0600 (its directory made 0700 when missing); a stale socket left
// by a dead daemon is replaced, while a live daemon's socket or any non-socket
// file at the path is refused. Sessions join the registry every listener
// shares (listen.max_connections); accept failures (out of file descriptors)
// back off instead of spinning.
#include <sys/socket.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <caf/actor.hpp>

#include "messages/connection_protocol.hpp"
#include "transport/accept_backoff.hpp"
#include "transport/session_registry.hpp"
#include "transport/socket_access.hpp"
#include "observability/listener_stats.hpp"

namespace weir {

class client_activity;
class read_poller;

struct unix_listener_options {
  std::string path;
  std::chrono::milliseconds read_timeout{30000};
  socket_access access;
  client_activity* activity = nullptr;  // told of client bytes; null: nobody listens
  read_poller* poller = nullptr;        // tells sessions of bytes; null: Asio's reactor does
};

class unix_listener {
 public:
  using actor_factory = std::function<connection_actor(connection_io_ptr)>;

  unix_listener(boost::asio::io_context& io, unix_listener_options options, listener_stats& stats,
                session_registry& sessions, actor_factory make_actor);
  ~unix_listener();

  /// Binds and listens. Throws startup_error with a one-line reason.
  void open();
  /// Starts accepting on the io_context.
  void start();
  /// Stops accepting (the registry winds the sessions down); safe from any thread.
  void close();
  /// Removes the socket file this listener created.
  void remove_socket_file();

 private:
  void accept_next();
  void on_accepted(boost::asio::local::stream_protocol::socket socket);
  /// Warns when the socket's mode lets others open it but `dir` keeps them from reaching it.
  void warn_if_unreachable(const std::string& dir) const;
  /// Whether the socket's access rules let this peer in (unknown credentials: no).
  bool peer_allowed(int fd, const std::optional<ucred>& peer) const;

  boost::asio::io_context& io_;
  unix_listener_options options_;
  listener_stats& stats_;
  session_registry& sessions_;
  actor_factory make_actor_;
  // The acceptor, its timer and the accept loop are used only on this strand:
  // with several io threads, accepting, backing off and closing (wind_down
  // then stop, each posted) would otherwise run at once on one acceptor.
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::local::stream_protocol::acceptor acceptor_;
  boost::asio::steady_timer accept_timer_;  // backs off after a failed accept
  accept_backoff backoff_;
  bool created_file_ = false;
};

}  // namespace weir
