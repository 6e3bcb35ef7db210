#pragma once
// The TLS side of a client connection (OpenSSL over a connected TCP socket
// whose timeouts are SO_RCVTIMEO/SO_SNDTIMEO). Internal to libweir-client.
#include <openssl/ssl.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "weir/client.hpp"

namespace weir::client {

class tls_channel {
 public:
  /// Handshakes on `fd` as a client: the daemon's certificate must chain to
  /// options.ca_file and name options.server_name (or `host`). Throws
  /// client_error naming what failed.
  tls_channel(int fd, const std::string& host, const tls_options& options);
  ~tls_channel();
  tls_channel(const tls_channel&) = delete;
  tls_channel& operator=(const tls_channel&) = delete;

  /// Like send()/recv(): bytes moved, or -1 with errno set (EAGAIN: timed
  /// out), or 0 from read() when the daemon closed the connection.
  long write(const std::uint8_t* data, std::size_t n);
  long read(std::uint8_t* out, std::size_t n);
  /// read() that leaves the bytes to be read again.
  long peek(std::uint8_t* out, std::size_t n);
  /// Decrypted bytes already here, waiting to be read.
  bool pending() const;
  /// OpenSSL's reason for the last failed read or write ("tlsv13 alert
  /// certificate required" when the daemon refused this client), or "".
  const std::string& failure() const { return failure_; }

 private:
  long result(int rc);
  std::string failure_;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
};

}  // namespace weir::client
