#pragma once
// Accepts producers on listen.tcp, over mutual TLS only: the client must
// present a certificate that chains to listen.tls.client_ca, over TLS 1.2 or
// later, within the handshake timeout. A connection counts against
// listen.max_connections (and may make room by evicting a stalled one) only
// once its handshake succeeded: a peer without a valid certificate can never
// push out a producer. Handshakes in progress are bounded apart
// (max_pending_handshakes); past that the oldest one is closed for the new
// one, so that peers that connect and stall cannot keep producers out.
// After the handshake the session is the Unix socket's, with the same
// connection actor. Failures are counted by reason and logged with the
// peer's address (at most one line a second, with a count of the rest).
#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "transport/accept_backoff.hpp"
#include "transport/session_registry.hpp"
#include "transport/tls_context.hpp"
#include "transport/tls_handshakes.hpp"
#include "messages/connection_protocol.hpp"
#include "observability/listener_stats.hpp"
#include "observability/log_throttle.hpp"

namespace weir {

class client_activity;

/// Handshakes in progress at once, at most: listen.max_connections, within 16 to 256.
std::size_t max_pending_handshakes(std::int64_t max_connections);

struct tls_listener_options {
  std::string address;  // listen.tcp, "host:port"
  std::chrono::milliseconds read_timeout{30000};
  std::chrono::milliseconds handshake_timeout{10000};
  std::size_t max_pending = 256;  // max_pending_handshakes(listen.max_connections)
  client_activity* activity = nullptr;  // told of client bytes; null: nobody listens
};

class tls_listener {
 public:
  using actor_factory = std::function<connection_actor(connection_io_ptr)>;

  tls_listener(boost::asio::io_context& io, tls_listener_options options, tls_context_store& contexts,
               listener_stats& stats, session_registry& sessions, actor_factory make_actor);

  /// Binds and listens. Throws startup_error naming listen.tcp.
  void open();
  /// Starts accepting on the io_context.
  void start();
  /// Stops accepting and closes the handshakes in progress; safe from any thread.
  void close();
  /// The port bound (listen.tcp may say 0).
  std::uint16_t port() const;

 private:
  void accept_next();
  void on_accepted(boost::asio::ip::tcp::socket socket);
  void on_handshake(const std::shared_ptr<tls_handshakes::handshake>& h);

  boost::asio::io_context& io_;
  tls_listener_options options_;
  tls_context_store& contexts_;
  listener_stats& stats_;
  session_registry& sessions_;
  actor_factory make_actor_;
  // The acceptor and its timer are used only on this strand (see unix_listener).
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_timer_;
  accept_backoff backoff_;
  tls_handshakes handshakes_;
};

}  // namespace weir
