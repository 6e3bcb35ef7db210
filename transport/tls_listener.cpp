#include "transport/tls_listener.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>

#include "transport/socket_session.hpp"
#include "transport/tcp_bind.hpp"
#include "observability/log.hpp"

namespace weir {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

/// The subject of the client's certificate, for the log.
std::string peer_subject(SSL* ssl) {
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (!cert) return "";
  char buf[256];
  X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof buf);
  X509_free(cert);
  return buf;
}

}  // namespace

std::size_t max_pending_handshakes(std::int64_t max_connections) {
  return static_cast<std::size_t>(std::clamp<std::int64_t>(max_connections, 16, 256));
}

tls_listener::tls_listener(asio::io_context& io, tls_listener_options options, tls_context_store& contexts,
                           listener_stats& stats, session_registry& sessions, actor_factory make_actor)
    : io_(io),
      options_(std::move(options)),
      contexts_(contexts),
      stats_(stats),
      sessions_(sessions),
      make_actor_(std::move(make_actor)),
      strand_(asio::make_strand(io)),
      acceptor_(io),
      accept_timer_(io),
      handshakes_(io, {options_.handshake_timeout, options_.max_pending, "listen.tls.handshake_timeout_ms", "listen.tcp"},
                  stats.tls) {}

void tls_listener::open() {
  bind_tcp_acceptor(acceptor_, "listen.tcp", options_.address);
  stats_.tls_enabled = true;
}

std::uint16_t tls_listener::port() const {
  boost::system::error_code ec;
  return acceptor_.local_endpoint(ec).port();
}

void tls_listener::start() {
  asio::post(strand_, [this] { accept_next(); });
}

void tls_listener::close() {
  asio::post(strand_, [this] {
    boost::system::error_code ignored;
    accept_timer_.cancel();
    acceptor_.close(ignored);
  });
  handshakes_.close_all();
}

void tls_listener::accept_next() {
  accept_forever(acceptor_, strand_, accept_timer_, backoff_, "tcp", stats_.accept_errors,
                 [this](tcp::socket socket) { on_accepted(std::move(socket)); });
}

void tls_listener::on_accepted(tcp::socket socket) {
  handshakes_.begin(std::move(socket), contexts_.current(), asio::ssl::stream_base::server,
                    [this](const std::shared_ptr<tls_handshakes::handshake>& h) { on_handshake(h); });
}

void tls_listener::on_handshake(const std::shared_ptr<tls_handshakes::handshake>& h) {
  boost::system::error_code ignored;
  std::string subject;
  if (log::enabled(log_level::debug)) subject = peer_subject(h->tls.native_handle());
  const bool admitted = sessions_.admit([&](std::function<void()> forget) {
    auto session = std::make_shared<tls_session>(std::move(h->tls), options_.read_timeout, stats_,
                                                 std::move(forget), options_.activity);
    session->attach(make_actor_);
    return session;
  });
  if (!admitted) {
    h->tls.lowest_layer().close(ignored);  // full of busy producers, or winding down
    return;
  }
  ++stats_.accepted;
  if (log::enabled(log_level::debug))
    log::debug("TLS connection accepted", {{"peer", h->peer}, {"subject", subject}});
}

}  // namespace weir
