#pragma once
// A private nginx for one test: a generated config in a temporary directory,
// one port on 127.0.0.1, plain HTTP or TLS. POST /ingest is answered 200 and
// its Idempotency-Key and body are written to a log, one request per line,
// for the test to read; POST /fast is answered 200 at once.
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace weir::test {

/// TLS for the server: its certificate and key, and (when set) the CA a
/// client certificate must chain to.
struct nginx_tls {
  std::string cert, key, client_ca;
};

class nginx_server {
 public:
  nginx_server();
  explicit nginx_server(const nginx_tls& tls);
  ~nginx_server();
  nginx_server(const nginx_server&) = delete;
  nginx_server& operator=(const nginx_server&) = delete;

  std::string url() const {
    return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) + "/ingest";
  }
  int port() const { return port_; }
  /// Answers every POST with 200 straight away (`return 200`), logging
  /// only that it came: the endpoint of the HTTP benchmark.
  std::string fast_url() const {
    return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) + "/fast";
  }
  std::size_t fast_requests() const;
  /// One line per request received: "<idempotency key> <body, JSON-escaped>".
  std::vector<std::string> logged() const;

  /// SIGKILL: the endpoint dies as in a crash, mid-request.
  void kill();
  /// SIGQUIT: a graceful stop, which closes idle connections politely (over
  /// TLS, with a close_notify).
  void stop_gracefully();
  /// Starts it again with the same configuration and port.
  void start();

 private:
  void configure(const nginx_tls* tls);

  std::filesystem::path dir_;
  bool tls_ = false;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace weir::test
