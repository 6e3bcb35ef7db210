#pragma once
// The TLS side of a client connection (OpenSSL over a connected TCP socket
// whose timeouts are SO_RCVTIMEO/SO_SNDTIMEO). Internal to libweir-client.
#include <openssl/ssl.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "weir/client.hpp"

namespace weir::client {

class tls_channel {
 public:
  /// Handshakes on `fd` as a client: the daemon's certificate must chain to
  /// options.ca_file and name options.server_name (or `host`). Throws
  /// client_error (kind tls, or timeout) naming what failed.
  tls_channel(int fd, const std::string& host, const tls_options& options);

  /// Like send()/recv(): bytes moved, or -1 with errno set (EAGAIN: timed
  /// out), or 0 from read() when the daemon closed the connection. Never
  /// raises SIGPIPE.
  long write(const std::uint8_t* data, std::size_t n);
  long read(std::uint8_t* out, std::size_t n);
  /// Whether application data (or the connection's end) can be read within
  /// `wait`; TLS records that carry none (session tickets) are taken in
  /// passing.
  bool readable(std::chrono::milliseconds wait);
  /// Whether the daemon has closed the connection, within `wait`.
  bool closed(std::chrono::milliseconds wait);
  /// OpenSSL's reason for the last failed read or write, or "".
  const std::string& failure() const { return failure_; }
  /// True when that failure was an alert from the daemon (it refused this
  /// client's certificate, with TLS 1.3): not worth retrying.
  bool refused() const { return refused_; }

 private:
  long result(int rc);
  /// A non-blocking SSL_peek of one byte: 1 data, 0 nothing yet, -1 closed or failed.
  int peek_now();

  int fd_;
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx_{nullptr, SSL_CTX_free};
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl_{nullptr, SSL_free};
  std::string failure_;
  bool refused_ = false;
};

}  // namespace weir::client
