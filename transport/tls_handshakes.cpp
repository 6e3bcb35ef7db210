#include "transport/tls_handshakes.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>

#include "observability/log.hpp"

namespace weir {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

tls_failure classify_tls_failure(const boost::system::error_code& ec, SSL* ssl) {
  if (ec == asio::error::eof || ec == asio::error::connection_reset || ec == asio::ssl::error::stream_truncated)
    return tls_failure::aborted;
  // A peer certificate that did not verify, whatever error the handshake
  // ended with (a chain to a CA of the same name but another key fails in
  // the signature check, an EVP error).
  if (const long v = SSL_get_verify_result(ssl); v != X509_V_OK)
    return v == X509_V_ERR_CERT_HAS_EXPIRED || v == X509_V_ERR_CERT_NOT_YET_VALID ? tls_failure::expired_cert
                                                                                  : tls_failure::bad_cert;
  if (ec.category() != asio::error::get_ssl_category()) return tls_failure::other;
  const auto code = static_cast<unsigned long>(ec.value());
  if (ERR_GET_LIB(code) != ERR_LIB_SSL) return tls_failure::other;
  const int reason = ERR_GET_REASON(code);
  // Any alert from the peer ends its handshake: it refused this side's
  // certificate (another CA, a name not in it, expired) or found nothing in common.
  if (reason >= SSL_AD_REASON_OFFSET && reason < SSL_AD_REASON_OFFSET + 256) return tls_failure::aborted;
  switch (reason) {
    case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
      return tls_failure::no_client_cert;
    case SSL_R_CERTIFICATE_VERIFY_FAILED:
      return tls_failure::bad_cert;
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

tls_handshakes::handshake::handshake(tcp::socket socket, const std::shared_ptr<asio::ssl::context>& ctx,
                                     asio::io_context& io)
    : context(ctx), tls(std::move(socket), *ctx), strand(asio::make_strand(io)), timer(strand) {}

tls_handshakes::tls_handshakes(asio::io_context& io, tls_handshake_options options, tls_handshake_stats& stats)
    : io_(io), options_(std::move(options)), stats_(stats) {}

void tls_handshakes::begin(tcp::socket socket, const std::shared_ptr<asio::ssl::context>& ctx,
                           asio::ssl::stream_base::handshake_type type, done_fn done, failed_fn failed) {
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  auto h = std::make_shared<handshake>(std::move(socket), ctx, io_);
  const auto remote = h->tls.lowest_layer().remote_endpoint(ignored);
  h->peer = remote.address().to_string() + ":" + std::to_string(remote.port());
  {
    // Past the bound the oldest makes room: an honest handshake takes
    // milliseconds; a peer that stalls is the one that has waited longest.
    std::lock_guard<std::mutex> guard(pending_mutex_);
    while (pending_.size() >= options_.max_pending) {
      if (auto oldest = pending_.begin()->second.lock()) cut(oldest, tls_failure::crowded);
      pending_.erase(pending_.begin());
    }
    h->id = next_id_++;
    pending_[h->id] = h;
  }
  asio::post(h->strand, [this, h, type, done = std::move(done), failed = std::move(failed)] {
    if (h->cut) return finish(h, asio::error::operation_aborted, done, failed);
    h->timer.expires_after(options_.timeout);
    h->timer.async_wait([h](const boost::system::error_code& ec) {
      if (ec || h->cut) return;  // cancelled: the handshake ended first
      h->cut = tls_failure::timeout;
      boost::system::error_code ignored2;
      h->tls.lowest_layer().close(ignored2);
    });
    h->tls.async_handshake(type, asio::bind_executor(h->strand, [this, h, done, failed](const boost::system::error_code& ec) {
                             finish(h, ec, done, failed);
                           }));
  });
}

void tls_handshakes::close_all() {
  // A handshake left running would keep its io thread busy until its timeout.
  std::lock_guard<std::mutex> guard(pending_mutex_);
  for (auto& [id, weak] : pending_)
    if (auto h = weak.lock()) cut(h, tls_failure::aborted);
}

void tls_handshakes::cut(const std::shared_ptr<handshake>& h, tls_failure why) {
  asio::post(h->strand, [h, why] {
    if (h->cut) return;
    h->cut = why;
    boost::system::error_code ignored;
    h->tls.lowest_layer().close(ignored);  // the handshake ends with an error, on this strand
  });
}

void tls_handshakes::finish(const std::shared_ptr<handshake>& h, const boost::system::error_code& ec,
                            const done_fn& done, const failed_fn& failed) {
  {
    std::lock_guard<std::mutex> guard(pending_mutex_);
    pending_.erase(h->id);
  }
  h->timer.cancel();
  if (!ec && !h->cut) {
    ++stats_.completed;
    return done(h);
  }
  const tls_failure why = h->cut ? *h->cut : classify_tls_failure(ec, h->tls.native_handle());
  std::string detail = why == tls_failure::timeout   ? "no handshake within " + options_.timeout_key
                       : why == tls_failure::crowded ? "closed unfinished for a newer handshake: too many at once"
                                                     : ec.message();
  if (why == tls_failure::bad_cert || why == tls_failure::expired_cert)
    detail += std::string(" (") + X509_verify_cert_error_string(SSL_get_verify_result(h->tls.native_handle())) + ")";
  refuse(*h, why, detail);
  boost::system::error_code ignored;
  h->tls.lowest_layer().close(ignored);
  if (failed) failed(why, detail);
}

void tls_handshakes::refuse(handshake& h, tls_failure why, const std::string& detail) {
  stats_.count(why);
  log_failure(h, why, detail);
}

void tls_handshakes::log_failure(const handshake& h, tls_failure why, const std::string& detail) {
  const std::uint64_t failures = failure_lines_.admit();
  if (failures == 0) return;
  // The failures in between by reason: a flood of one kind would otherwise
  // be told under the reason of whichever failure got the line.
  std::string by_reason;
  for (std::size_t r = 0; r < tls_failure_count; ++r) {
    const std::uint64_t total = stats_.failures[r].load();
    const std::uint64_t since = total - failures_at_last_log_[r].exchange(total);
    if (since > 0)
      by_reason += (by_reason.empty() ? "" : ",") + std::string(name_of(static_cast<tls_failure>(r))) + "=" +
                   std::to_string(since);
  }
  log::warn("TLS handshake failed; connection closed",
            {{"port", options_.port},
             {"peer", h.peer},
             {"reason", name_of(why)},
             {"error", detail},
             {"failures_since_last_log", std::to_string(failures)},
             {"by_reason", by_reason}});
}

}  // namespace weir
