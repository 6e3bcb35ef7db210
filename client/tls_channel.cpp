#include "client/tls_channel.hpp"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <cerrno>

namespace weir::client {

namespace {

std::string last_openssl_error() {
  const unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e == 0) return "";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

bool is_ip_address(const std::string& s) {
  unsigned char buf[16];
  return ::inet_pton(AF_INET, s.c_str(), buf) == 1 || ::inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

}  // namespace

tls_channel::tls_channel(int fd, const std::string& host, const tls_options& options) {
  auto fail = [&](const std::string& what) {
    const std::string why = last_openssl_error();
    throw client_error("TLS: " + what + (why.empty() ? "" : " (" + why + ")"), error_kind::tls);
  };
  ctx_ = SSL_CTX_new(TLS_client_method());
  if (!ctx_) fail("cannot create a context");
  SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
  if (options.ca_file.empty() || SSL_CTX_load_verify_locations(ctx_, options.ca_file.c_str(), nullptr) != 1)
    fail("cannot load the CA file '" + options.ca_file + "'");
  if (!options.cert_file.empty() && SSL_CTX_use_certificate_chain_file(ctx_, options.cert_file.c_str()) != 1)
    fail("cannot load the client certificate '" + options.cert_file + "'");
  if (!options.key_file.empty() &&
      (SSL_CTX_use_PrivateKey_file(ctx_, options.key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
       SSL_CTX_check_private_key(ctx_) != 1))
    fail("cannot load the client key '" + options.key_file + "', or it does not match the certificate");
  SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
  ssl_ = SSL_new(ctx_);
  if (!ssl_ || SSL_set_fd(ssl_, fd) != 1) fail("cannot create a session");
  // The daemon's certificate must name the host dialled (or server_name).
  const std::string name = options.server_name.empty() ? host : options.server_name;
  if (is_ip_address(name)) {
    if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), name.c_str()) != 1) fail("bad IP address " + name);
  } else {
    SSL_set_tlsext_host_name(ssl_, name.c_str());
    if (SSL_set1_host(ssl_, name.c_str()) != 1) fail("bad host name " + name);
  }
  if (SSL_connect(ssl_) != 1) {
    const long verify = SSL_get_verify_result(ssl_);
    if (verify != X509_V_OK)
      fail("the daemon's certificate is not trusted: " + std::string(X509_verify_cert_error_string(verify)));
    if (errno == EAGAIN || errno == EWOULDBLOCK) fail("no handshake within the connect timeout");
    fail("handshake with " + name + " failed");
  }
}

tls_channel::~tls_channel() {
  if (ssl_) SSL_free(ssl_);
  if (ctx_) SSL_CTX_free(ctx_);
}

long tls_channel::result(int rc) {
  if (rc > 0) return rc;
  switch (SSL_get_error(ssl_, rc)) {
    case SSL_ERROR_ZERO_RETURN:
      return 0;
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
      errno = EAGAIN;  // a blocking socket wants more only when its timeout passed
      return -1;
    case SSL_ERROR_SYSCALL:
      ERR_clear_error();
      if (errno == 0) return 0;  // closed without close_notify
      return -1;
    default: {
      const unsigned long e = ERR_peek_last_error();
      failure_ = e ? ERR_reason_error_string(e) ? ERR_reason_error_string(e) : "TLS error" : "TLS error";
      ERR_clear_error();
      errno = ECONNRESET;  // a TLS alert: the daemon refused us (e.g. our certificate)
      return -1;
    }
  }
}

long tls_channel::write(const std::uint8_t* data, std::size_t n) {
  errno = 0;
  return result(SSL_write(ssl_, data, static_cast<int>(n)));
}

long tls_channel::read(std::uint8_t* out, std::size_t n) {
  errno = 0;
  return result(SSL_read(ssl_, out, static_cast<int>(n)));
}

long tls_channel::peek(std::uint8_t* out, std::size_t n) {
  errno = 0;
  return result(SSL_peek(ssl_, out, static_cast<int>(n)));
}

bool tls_channel::pending() const { return SSL_pending(ssl_) > 0; }

}  // namespace weir::client
