#pragma once
// Connections between their TCP connect and the end of their TLS handshake,
// for a port that admits only authenticated peers (listen.tcp, and the
// cluster's links both ways). Each handshake has a deadline; at most
// `max_pending` run at once, and past that the oldest is closed for the new
// one, so that peers that connect and stall cannot keep others out. Failures
// are counted by reason and logged a line per burst (the first at once, then
// at most one a second), each line with the failures since the last by reason.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "observability/listener_stats.hpp"
#include "observability/log_throttle.hpp"

namespace weir {

struct tls_handshake_options {
  std::chrono::milliseconds timeout{10000};
  std::size_t max_pending = 256;
  std::string timeout_key;  // the key that sets `timeout`, for the log
  std::string port;         // what the log calls the connections ("listen.tcp", "cluster")
};

/// Why a handshake failed, from its error and its SSL session.
tls_failure classify_tls_failure(const boost::system::error_code& ec, SSL* ssl);

class tls_handshakes {
 public:
  using stream = boost::asio::ssl::stream<boost::asio::ip::tcp::socket>;
  using strand_type = boost::asio::strand<boost::asio::io_context::executor_type>;

  struct handshake {
    handshake(boost::asio::ip::tcp::socket socket, const std::shared_ptr<boost::asio::ssl::context>& ctx,
              boost::asio::io_context& io);
    std::shared_ptr<boost::asio::ssl::context> context;  // the one it began with, even across a reload
    stream tls;
    strand_type strand;
    boost::asio::steady_timer timer;
    std::string peer;  // host:port
    std::uint64_t id = 0;
    std::optional<tls_failure> cut;  // ended here: timeout, crowded, or the port closing
  };
  /// On the handshake's strand: done with an authenticated peer, or failed (`why`, `detail`).
  using done_fn = std::function<void(const std::shared_ptr<handshake>&)>;
  using failed_fn = std::function<void(tls_failure why, const std::string& detail)>;

  tls_handshakes(boost::asio::io_context& io, tls_handshake_options options, tls_handshake_stats& stats);

  /// Starts the handshake of `socket` (connected) as `type`.
  void begin(boost::asio::ip::tcp::socket socket, const std::shared_ptr<boost::asio::ssl::context>& ctx,
             boost::asio::ssl::stream_base::handshake_type type, done_fn done, failed_fn failed = {});
  /// Counts and logs a failure found after the TLS handshake itself (the
  /// peer's certificate names the wrong node): the caller closes the stream.
  void refuse(handshake& h, tls_failure why, const std::string& detail);
  /// Closes every handshake in progress; safe from any thread.
  void close_all();

 private:
  void finish(const std::shared_ptr<handshake>& h, const boost::system::error_code& ec, const done_fn& done,
              const failed_fn& failed);
  /// Ends a handshake in progress on its strand, as `why`.
  static void cut(const std::shared_ptr<handshake>& h, tls_failure why);
  void log_failure(const handshake& h, tls_failure why, const std::string& detail);

  boost::asio::io_context& io_;
  tls_handshake_options options_;
  tls_handshake_stats& stats_;
  std::mutex pending_mutex_;
  std::uint64_t next_id_ = 0;
  std::map<std::uint64_t, std::weak_ptr<handshake>> pending_;  // oldest first: ids rise
  log_throttle failure_lines_{std::chrono::seconds(1)};
  std::array<std::atomic<std::uint64_t>, tls_failure_count> failures_at_last_log_{};  // per reason
};

}  // namespace weir
