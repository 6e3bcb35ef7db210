#include "client/tls_channel.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <ctime>

#include "files/pem.hpp"

namespace weir::client {

namespace {

bool is_ip_address(const std::string& s) {
  unsigned char buf[16];
  return ::inet_pton(AF_INET, s.c_str(), buf) == 1 || ::inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

/// OpenSSL writes to the socket with plain write(): to a daemon that has
/// closed the connection that raises SIGPIPE, which would end the
/// application. For the duration of one OpenSSL call this thread blocks
/// SIGPIPE and takes back one that call raised (one already pending before
/// is left alone): the error comes back as EPIPE instead.
class sigpipe_guard {
 public:
  sigpipe_guard() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~sigpipe_guard() {
    if (!was_pending_) {
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        const timespec none{0, 0};
        while (sigtimedwait(&pipe_, nullptr, &none) < 0 && errno == EINTR) {
        }
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  sigpipe_guard(const sigpipe_guard&) = delete;
  sigpipe_guard& operator=(const sigpipe_guard&) = delete;

 private:
  sigset_t pipe_{}, old_{};
  bool was_pending_ = false;
};

/// Whether an OpenSSL reason is "the peer sent this alert".
bool is_alert(unsigned long e) {
  const int reason = ERR_GET_REASON(e);
  return ERR_GET_LIB(e) == ERR_LIB_SSL && reason >= SSL_AD_REASON_OFFSET && reason < SSL_AD_REASON_OFFSET + 256;
}

}  // namespace

tls_channel::tls_channel(int fd, const std::string& host, const tls_options& options) : fd_(fd) {
  auto fail = [&](const std::string& what, error_kind kind = error_kind::tls) {
    const std::string why = last_openssl_error();
    throw client_error("TLS: " + what + (why.empty() ? "" : " (" + why + ")"), kind);
  };
  ctx_.reset(SSL_CTX_new(TLS_client_method()));
  if (!ctx_) fail("cannot create a context");
  SSL_CTX* ctx = ctx_.get();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // Each file is read as a regular file within a time limit (files/pem.hpp),
  // not by OpenSSL from its path: a FIFO there would block the client.
  auto load = [&](const char* what, const std::string& path, auto&& use) {
    std::string pem;
    std::string why = read_pem_file(path, pem);
    if (why.empty()) why = use(pem);
    if (!why.empty()) throw client_error("TLS: cannot load " + std::string(what) + " '" + path + "': " + why, error_kind::tls);
  };
  if (options.ca_file.empty()) fail("no CA file given");
  load("the CA file", options.ca_file, [&](const std::string& pem) { return trust_ca_pem(ctx, pem, false); });
  if (!options.cert_file.empty())
    load("the client certificate", options.cert_file,
         [&](const std::string& pem) { return use_certificate_chain_pem(ctx, pem); });
  if (!options.key_file.empty())
    load("the client key", options.key_file, [&](const std::string& pem) {
      const std::string why = use_private_key_pem(ctx, pem);
      return why == key_does_not_match ? "it does not match the client certificate" : why;
    });
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  ssl_.reset(SSL_new(ctx));
  if (!ssl_ || SSL_set_fd(ssl_.get(), fd) != 1) fail("cannot create a session");
  // The daemon's certificate must name the host dialled (or server_name).
  const std::string name = options.server_name.empty() ? host : options.server_name;
  if (is_ip_address(name)) {
    if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_.get()), name.c_str()) != 1) fail("bad IP address " + name);
  } else {
    SSL_set_tlsext_host_name(ssl_.get(), name.c_str());
    if (SSL_set1_host(ssl_.get(), name.c_str()) != 1) fail("bad host name " + name);
  }
  errno = 0;
  int connected = 0;
  {
    sigpipe_guard no_sigpipe;
    connected = SSL_connect(ssl_.get());
  }
  if (connected != 1) {
    const long verify = SSL_get_verify_result(ssl_.get());
    if (verify != X509_V_OK)
      fail("the daemon's certificate is not trusted: " + std::string(X509_verify_cert_error_string(verify)));
    if (errno == EAGAIN || errno == EWOULDBLOCK) fail("no handshake within the connect timeout", error_kind::timeout);
    fail("handshake with " + name + " failed");
  }
}

long tls_channel::result(int rc) {
  if (rc > 0) return rc;
  const int err = SSL_get_error(ssl_.get(), rc);
  const unsigned long e = ERR_peek_last_error();
  switch (err) {
    case SSL_ERROR_ZERO_RETURN:
      return 0;
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
      errno = EAGAIN;  // a blocking socket wants more only when its timeout passed
      return -1;
    case SSL_ERROR_SYSCALL:
      ERR_clear_error();
      return errno == 0 ? 0 : -1;  // 0: closed without close_notify
    default:
      ERR_clear_error();
      // The daemon closes a connection without close_notify: that is its end, not an error.
      if (ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING) return 0;
      failure_ = e && ERR_reason_error_string(e) ? ERR_reason_error_string(e) : "TLS error";
      refused_ = is_alert(e);  // e.g. "tlsv13 alert certificate required"
      errno = ECONNRESET;
      return -1;
  }
}

long tls_channel::write(const std::uint8_t* data, std::size_t n) {
  sigpipe_guard no_sigpipe;
  errno = 0;
  return result(SSL_write(ssl_.get(), data, static_cast<int>(n)));
}

long tls_channel::read(std::uint8_t* out, std::size_t n) {
  sigpipe_guard no_sigpipe;  // a read may write too (a key update)
  errno = 0;
  return result(SSL_read(ssl_.get(), out, static_cast<int>(n)));
}

int tls_channel::peek_now() {
  const int flags = ::fcntl(fd_, F_GETFL);
  ::fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
  std::uint8_t b;
  int rc = 0;
  {
    sigpipe_guard no_sigpipe;
    rc = SSL_peek(ssl_.get(), &b, 1);
  }
  const int err = rc > 0 ? SSL_ERROR_NONE : SSL_get_error(ssl_.get(), rc);
  ::fcntl(fd_, F_SETFL, flags);
  if (rc > 0) return 1;
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
    ERR_clear_error();
    return 0;
  }
  ERR_clear_error();
  return -1;
}

bool tls_channel::readable(std::chrono::milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    if (SSL_pending(ssl_.get()) > 0) return true;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0))) <= 0) return false;
    if (peek_now() != 0) return true;  // data, or the end: the read will say which
    // Only TLS records without data (session tickets): wait on.
  }
}

bool tls_channel::closed(std::chrono::milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0))) <= 0) return false;
    const int peeked = peek_now();
    if (peeked != 0) return peeked < 0;
  }
}

}  // namespace weir::client
