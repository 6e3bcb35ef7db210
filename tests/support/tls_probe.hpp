#pragma once
// A TLS client made with OpenSSL directly, for what libweir-client will not
// do (offer a protocol version older than TLS 1.2) or does not show (the
// certificate the daemon presented).
#include <cstdint>
#include <string>

namespace weir::test {

struct tls_probe_options {
  std::string ca_file;    // checks the daemon's certificate with it when set
  std::string cert_file;  // this client's certificate and key, when set
  std::string key_file;
  int max_version = 0;  // TLS1_1_VERSION etc.; 0: the newest OpenSSL has
  std::string send;     // written after the handshake; then the probe reads until the peer closes
};

struct tls_probe_result {
  bool handshake_ok = false;
  std::string error;           // OpenSSL's reason when the handshake failed
  std::string version;         // negotiated, e.g. "TLSv1.3"
  std::string server_subject;  // the daemon's certificate, e.g. "/CN=server"
  std::string server_serial;   // its serial number, hex
  bool closed_by_peer = false;  // with `send`: the peer closed within 10 s of it
};

/// One handshake with 127.0.0.1:`port` (reads bounded at 10 s), then a
/// clean close.
tls_probe_result probe_tls(std::uint16_t port, const tls_probe_options& options);

}  // namespace weir::test
