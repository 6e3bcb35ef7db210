#include "support/tls_probe.hpp"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "files/pem.hpp"
#include "support/raw_peer.hpp"

namespace weir::test {

namespace {

std::string openssl_error() {
  const std::string why = last_openssl_error();
  return why.empty() ? "no OpenSSL error queued" : why;
}

std::string serial_hex(X509* cert) {
  std::unique_ptr<BIGNUM, decltype(&BN_free)> bn(ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr), BN_free);
  if (!bn) return "";
  char* hex = BN_bn2hex(bn.get());
  std::string out = hex ? hex : "";
  OPENSSL_free(hex);
  return out;
}

std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> make_context(const tls_probe_options& o, std::string& error) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  if (o.max_version != 0) {
    // OpenSSL 3 refuses to even offer TLS 1.0/1.1 above security level 0:
    // without this the probe would fail on its own side, never asking the daemon.
    SSL_CTX_set_security_level(ctx.get(), 0);
    SSL_CTX_set_min_proto_version(ctx.get(), 0);
    SSL_CTX_set_max_proto_version(ctx.get(), o.max_version);
  }
  const bool loaded =
      (o.ca_file.empty() || SSL_CTX_load_verify_locations(ctx.get(), o.ca_file.c_str(), nullptr) == 1) &&
      (o.cert_file.empty() || SSL_CTX_use_certificate_chain_file(ctx.get(), o.cert_file.c_str()) == 1) &&
      (o.key_file.empty() || SSL_CTX_use_PrivateKey_file(ctx.get(), o.key_file.c_str(), SSL_FILETYPE_PEM) == 1);
  if (!loaded) {
    error = "cannot load the probe's files: " + openssl_error();
    ctx.reset();
    return ctx;
  }
  if (!o.ca_file.empty()) SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  return ctx;
}

}  // namespace

tls_probe_result probe_tls(std::uint16_t port, const tls_probe_options& options) {
  tls_probe_result out;
  auto ctx = make_context(options, out.error);
  if (!ctx) return out;
  const int fd = tcp_connect(port);
  if (fd < 0) {
    out.error = "cannot connect";
    return out;
  }
  timeval limit{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), SSL_free);
  SSL_set_fd(ssl.get(), fd);
  ERR_clear_error();
  if (SSL_connect(ssl.get()) == 1) {
    out.handshake_ok = true;
    out.version = SSL_get_version(ssl.get());
    if (X509* cert = SSL_get1_peer_certificate(ssl.get())) {
      char name[256];
      X509_NAME_oneline(X509_get_subject_name(cert), name, sizeof name);
      out.server_subject = name;
      out.server_serial = serial_hex(cert);
      X509_free(cert);
    }
    if (!options.send.empty() &&
        SSL_write(ssl.get(), options.send.data(), static_cast<int>(options.send.size())) > 0) {
      char buf[4096];
      int n = 0;
      while ((n = SSL_read(ssl.get(), buf, sizeof buf)) > 0) {
      }
      // A clean close or a reset is the peer's; a read timeout is not.
      out.closed_by_peer = SSL_get_error(ssl.get(), n) != SSL_ERROR_SYSCALL || (errno != EAGAIN && errno != EWOULDBLOCK);
      ERR_clear_error();
    }
    SSL_shutdown(ssl.get());
  } else {
    out.error = openssl_error();
  }
  ::close(fd);
  return out;
}

}  // namespace weir::test
