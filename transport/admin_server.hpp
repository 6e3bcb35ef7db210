#pragma once
// The admin HTTP server (admin.listen, default 127.0.0.1:9185), on its own
// thread so that nothing it does can slow ingest:
//
//   GET /metrics        Prometheus text exposition
//   GET /healthz        200 while the daemon runs
//   GET /readyz         200 when recovery is done, every shard can write and the
//                       WAB is under its cap; else 503 with the reason
//   GET /api/v1/status  JSON: shards, delivery, sink, rates over 1/10/60 s
//   GET /               the live dashboard (one self-contained page)
//
// Requests are small and bounded (8 KiB of headers, 1 KiB of body, which no
// endpoint reads), connections are
// capped (at the cap the connection waiting longest on its peer makes room),
// and an idle or slow client is dropped after 10 s.
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "observability/metrics.hpp"
#include "observability/status_report.hpp"

namespace weir {

class admin_session;

class admin_server {
 public:
  /// Binds `address` ("host:port"); throws startup_error naming admin.listen when it cannot.
  admin_server(const std::string& address, metrics& stats, metrics::live_state live);
  ~admin_server();
  admin_server(const admin_server&) = delete;
  admin_server& operator=(const admin_server&) = delete;

  void start();
  void stop();
  std::uint16_t port() const;

  /// Builds the response body for `target`; public for the session code.
  struct answer {
    unsigned status;
    std::string content_type;
    std::string body;
  };
  answer handle(const std::string& method, const std::string& target);

  std::atomic<int> connections{0};

 private:
  void accept_next();
  void tick();
  /// At the connection cap: closes the session that has waited longest on its peer.
  void forget_closed();
  void make_room();

  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_{io_};
  boost::asio::steady_timer ticker_{io_};
  metrics& stats_;
  metrics::live_state live_;
  status_report status_;
  std::thread thread_;
  std::map<std::uint64_t, std::weak_ptr<admin_session>> sessions_;  // admin thread only
  std::uint64_t next_session_ = 0;
};

}  // namespace weir
