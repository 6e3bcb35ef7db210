#pragma once
// One commit slot's keep-alive HTTP/1.1 connection, plain or TLS, for the
// sinks that speak HTTP (http, clickhouse). Every operation runs on the
// slot's own io_context to completion, bounded by the sink's timeout: a
// server that accepts and never answers costs sink.timeout_ms, not a wedged
// slot. Over TLS the endpoint's certificate is checked against the context's
// CAs and its name against the URL's host (SNI sent).
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <memory>
#include <optional>
#include <string>

#include "config/http_url.hpp"
#include "wire/outcome.hpp"

namespace weir {

/// A TLS client context that verifies the endpoint: the CAs of `ca_file`
/// (the system's when empty), and a client certificate when `cert`/`key` are
/// set. `prefix` names the keys in a refusal ("sink.http" gives
/// "sink.http.ca_file = …: …"). Throws std::runtime_error.
std::shared_ptr<boost::asio::ssl::context> make_client_tls_context(const std::string& prefix,
                                                                   const std::string& ca_file,
                                                                   const std::string& cert, const std::string& key);

class http_connection {
 public:
  using response = boost::beast::http::response<boost::beast::http::string_body>;
  using request = boost::beast::http::request<boost::beast::http::string_body>;

  /// `tls`: set for https://.
  http_connection(http_url url, std::shared_ptr<boost::asio::ssl::context> tls, int timeout_ms)
      : url_(std::move(url)), tls_(std::move(tls)), timeout_ms_(timeout_ms) {}

  const http_url& url() const { return url_; }
  bool is_open() { return lowest().socket().is_open(); }

  /// "" once connected (TLS: handshake done and the endpoint's certificate
  /// verified); why not otherwise.
  std::string ensure_connected();
  /// Whether the idle kept-alive connection may be gone: the endpoint
  /// closed or reset it, or sent bytes nobody asked for. Neither waits nor
  /// takes bytes.
  bool maybe_stale();
  void disconnect();
  /// An endpoint without TCP_NODELAY holds each answer of a pipelined
  /// window until its previous one is ACKed; left to the delayed ACK, that
  /// is up to 40 ms per answer. Quick ACKs cost one setsockopt per window.
  void ack_answers_at_once();

  /// One request on the kept-alive connection, reconnecting once if the
  /// server had closed it meanwhile; the reason on a transport error.
  /// `body` is lent to the request and given back (its buffer serves the
  /// caller's next request).
  outcome<response, std::string> send(request& req, std::string& body);

  /// Runs one asynchronous operation started by `start(handler)` to completion.
  template <class Start>
  boost::system::error_code run(Start start) {
    boost::system::error_code result = boost::asio::error::would_block;
    lowest().expires_after(std::chrono::milliseconds(timeout_ms_));
    start([&result](boost::system::error_code ec, auto&&...) { result = ec; });
    io_.restart();
    io_.run();
    return result;
  }
  /// `f` on the stream requests go through: the TLS one, or the plain one.
  template <class F>
  boost::system::error_code with_stream(F f) {
    return secure_ ? f(*secure_) : f(plain_);
  }
  /// Bytes read past the last response: the next one's.
  boost::beast::flat_buffer& buffer() { return buffer_; }

 private:
  boost::beast::tcp_stream& lowest() { return secure_ ? boost::beast::get_lowest_layer(*secure_) : plain_; }

  http_url url_;
  std::shared_ptr<boost::asio::ssl::context> tls_;
  int timeout_ms_;
  boost::asio::io_context io_;
  boost::beast::tcp_stream plain_{io_};
  std::optional<boost::beast::ssl_stream<boost::beast::tcp_stream>> secure_;  // https://, per connection
  boost::beast::flat_buffer buffer_;
};

}  // namespace weir
