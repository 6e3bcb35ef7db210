#include "daemon/tls_listener.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>

#include "daemon/socket_session.hpp"
#include "daemon/tcp_bind.hpp"
#include "observability/log.hpp"

namespace weir {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

/// One connection between accept and the end of its TLS handshake.
struct tls_listener::handshake {
  handshake(tcp::socket socket, const std::shared_ptr<asio::ssl::context>& ctx, asio::io_context& io)
      : context(ctx), stream(std::move(socket), *ctx), strand(asio::make_strand(io)), timer(strand) {}
  std::shared_ptr<asio::ssl::context> context;  // the one it began with, even across a reload
  tls_stream stream;
  asio::strand<asio::io_context::executor_type> strand;
  asio::steady_timer timer;
  std::string peer;
  std::uint64_t id = 0;
  std::optional<tls_failure> cut;  // ended by the listener: timeout, crowded, or the daemon stopping
};

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

tls_failure classify(const boost::system::error_code& ec, SSL* ssl) {
  if (ec == asio::error::eof || ec == asio::error::connection_reset || ec == asio::ssl::error::stream_truncated)
    return tls_failure::aborted;
  if (ec.category() != asio::error::get_ssl_category()) return tls_failure::other;
  const auto code = static_cast<unsigned long>(ec.value());
  if (ERR_GET_LIB(code) != ERR_LIB_SSL) return tls_failure::other;
  const int reason = ERR_GET_REASON(code);
  // Any alert from the client ends its handshake: it refused the daemon's
  // certificate (another CA, a name not in it, expired) or found nothing in common.
  if (reason >= SSL_AD_REASON_OFFSET && reason < SSL_AD_REASON_OFFSET + 256) return tls_failure::aborted;
  switch (reason) {
    case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
      return tls_failure::no_client_cert;
    case SSL_R_CERTIFICATE_VERIFY_FAILED: {
      const long v = SSL_get_verify_result(ssl);
      return v == X509_V_ERR_CERT_HAS_EXPIRED || v == X509_V_ERR_CERT_NOT_YET_VALID ? tls_failure::expired_cert
                                                                                    : tls_failure::bad_cert;
    }
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_HTTP_REQUEST:
    case SSL_R_HTTPS_PROXY_REQUEST:
    case SSL_R_UNKNOWN_PROTOCOL:
    case SSL_R_UNSUPPORTED_PROTOCOL:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
    case SSL_R_RECORD_LENGTH_MISMATCH:
    case SSL_R_VERSION_TOO_LOW:
    case SSL_R_NO_SHARED_CIPHER:
      return tls_failure::protocol;
    default:
      return tls_failure::other;
  }
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
      accept_timer_(io) {}

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
  // A handshake left running would keep the io threads busy until its timeout.
  std::lock_guard<std::mutex> guard(pending_mutex_);
  for (auto& [id, weak] : pending_)
    if (auto h = weak.lock()) cut(h, tls_failure::aborted);
}

void tls_listener::cut(const std::shared_ptr<handshake>& h, tls_failure why) {
  asio::post(h->strand, [h, why] {
    if (h->cut) return;
    h->cut = why;
    boost::system::error_code ignored;
    h->stream.lowest_layer().close(ignored);  // the handshake ends with an error, on this strand
  });
}

void tls_listener::accept_next() {
  accept_forever(acceptor_, strand_, accept_timer_, backoff_, "tcp", stats_,
                 [this](tcp::socket socket) { on_accepted(std::move(socket)); });
}

void tls_listener::on_accepted(tcp::socket socket) {
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  auto h = std::make_shared<handshake>(std::move(socket), contexts_.current(), io_);
  const auto remote = h->stream.lowest_layer().remote_endpoint(ignored);
  h->peer = remote.address().to_string() + ":" + std::to_string(remote.port());
  {
    // Unauthenticated peers take no session slot, but they are bounded too:
    // past the bound the oldest makes room (a producer's handshake takes
    // milliseconds; a peer that stalls is the one that has waited longest).
    std::lock_guard<std::mutex> guard(pending_mutex_);
    while (pending_.size() >= options_.max_pending) {
      if (auto oldest = pending_.begin()->second.lock()) cut(oldest, tls_failure::crowded);
      pending_.erase(pending_.begin());
    }
    h->id = next_handshake_++;
    pending_[h->id] = h;
  }
  asio::post(h->strand, [this, h] {
    if (h->cut) return on_handshake(h, asio::error::operation_aborted);
    h->timer.expires_after(options_.handshake_timeout);
    h->timer.async_wait([h](const boost::system::error_code& ec) {
      if (ec || h->cut) return;  // cancelled: the handshake ended first
      h->cut = tls_failure::timeout;
      boost::system::error_code ignored2;
      h->stream.lowest_layer().close(ignored2);
    });
    h->stream.async_handshake(asio::ssl::stream_base::server,
                              asio::bind_executor(h->strand, [this, h](const boost::system::error_code& ec) {
                                on_handshake(h, ec);
                              }));
  });
}

void tls_listener::on_handshake(const std::shared_ptr<handshake>& h, const boost::system::error_code& ec) {
  {
    std::lock_guard<std::mutex> guard(pending_mutex_);
    pending_.erase(h->id);
  }
  h->timer.cancel();
  boost::system::error_code ignored;
  if (ec || h->cut) {
    count_failure(*h, ec);
    h->stream.lowest_layer().close(ignored);
    return;
  }
  ++stats_.tls_handshakes;
  std::string subject;
  if (log::enabled(log_level::debug)) subject = peer_subject(h->stream.native_handle());
  const bool admitted = sessions_.admit([&](std::function<void()> forget) {
    auto session = std::make_shared<tls_session>(std::move(h->stream), options_.read_timeout, stats_,
                                                 std::move(forget), options_.activity);
    session->attach(make_actor_);
    return session;
  });
  if (!admitted) {
    h->stream.lowest_layer().close(ignored);  // full of busy producers, or winding down
    return;
  }
  ++stats_.accepted;
  if (log::enabled(log_level::debug))
    log::debug("TLS connection accepted", {{"peer", h->peer}, {"subject", subject}});
}

void tls_listener::count_failure(handshake& h, const boost::system::error_code& ec) {
  SSL* ssl = h.stream.native_handle();
  const tls_failure why = h.cut ? *h.cut : classify(ec, ssl);
  stats_.count(why);
  const std::uint64_t failures = failure_lines_.admit();
  if (failures == 0) return;
  std::string detail = why == tls_failure::timeout   ? "no handshake within listen.tls.handshake_timeout_ms"
                       : why == tls_failure::crowded ? "closed unfinished for a newer handshake: too many at once"
                                                     : ec.message();
  if (why == tls_failure::bad_cert || why == tls_failure::expired_cert)
    detail += std::string(" (") + X509_verify_cert_error_string(SSL_get_verify_result(ssl)) + ")";
  // The failures in between by reason: a flood of one kind would otherwise
  // be told under the reason of whichever failure got the line.
  std::string by_reason;
  for (std::size_t r = 0; r < tls_failure_count; ++r) {
    const std::uint64_t total = stats_.tls_failures[r].load();
    const std::uint64_t since = total - failures_at_last_log_[r].exchange(total);
    if (since > 0) by_reason += (by_reason.empty() ? "" : ",") + std::string(name_of(static_cast<tls_failure>(r))) + "=" + std::to_string(since);
  }
  log::warn("TLS handshake failed; connection closed",
            {{"peer", h.peer},
             {"reason", name_of(why)},
             {"error", detail},
             {"failures_since_last_log", std::to_string(failures)},
             {"by_reason", by_reason}});
}

}  // namespace weir
