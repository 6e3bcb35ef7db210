#include "transport/tls_context.hpp"

#include <openssl/ssl.h>

#include <ctime>
#include <stdexcept>
#include <tuple>

#include "files/pem.hpp"
#include "observability/log.hpp"

namespace weir {

namespace ssl = boost::asio::ssl;

namespace {

[[noreturn]] void refuse(const char* key, const std::string& path, const std::string& why) {
  throw std::runtime_error(std::string(key) + " = " + path + ": " + why);
}

/// The PEM text of a TLS file, read as a regular file within the time
/// limit (files/pem.hpp): OpenSSL would block opening a FIFO put in its
/// place, or a file on a file system that stopped answering, and with it a
/// SIGHUP reload.
std::string pem_of(const char* key, const std::string& path) {
  std::string pem;
  if (const auto why = read_pem_file(path, pem); !why.empty()) refuse(key, path, why + "; expected a PEM file");
  return pem;
}

std::string utc(std::int64_t at) {
  const std::time_t t = static_cast<std::time_t>(at);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

tls_validity load_mutual_tls(ssl::context& ctx, const tls_file_keys& keys, const std::string& cert,
                             const std::string& key, const std::string& ca) {
  const std::string cert_pem = pem_of(keys.cert, cert), key_pem = pem_of(keys.key, key), ca_pem = pem_of(keys.ca, ca);
  SSL_CTX* native = ctx.native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_compression | ssl::context::single_dh_use);
  if (const auto why = use_certificate_chain_pem(native, cert_pem); !why.empty())
    refuse(keys.cert, cert, "not a PEM certificate chain: " + why);
  if (const auto why = use_private_key_pem(native, key_pem); !why.empty())
    refuse(keys.key, key, why == key_does_not_match ? std::string("does not match the certificate in ") + keys.cert : why);
  // The CA's names are also what a peer is told to choose its certificate by.
  if (const auto why = trust_ca_pem(native, ca_pem, true); !why.empty())
    refuse(keys.ca, ca, "not a PEM CA certificate: " + why);
  // A peer certificate is required, not merely checked when sent.
  SSL_CTX_set_verify(native, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  return {pem_not_after(cert_pem), pem_not_after(ca_pem)};
}

namespace {

/// The server context for `files`, and what it loaded is valid until.
std::shared_ptr<ssl::context> server_tls_context(const config::tls_files& files, tls_validity& validity) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  validity = load_mutual_tls(*ctx, {"listen.tls.cert", "listen.tls.key", "listen.tls.client_ca"}, files.cert,
                             files.key, files.client_ca);
  // Session resumption with client verification needs an id context.
  static const unsigned char id_context[] = "weir-listen-tcp";
  SSL_CTX_set_session_id_context(ctx->native_handle(), id_context, sizeof id_context - 1);
  return ctx;
}

}  // namespace

std::shared_ptr<ssl::context> make_server_tls_context(const config::tls_files& files) {
  tls_validity unused;
  return server_tls_context(files, unused);
}

tls_context_store::tls_context_store(const config::tls_files& files, listener_stats& stats) : stats_(stats) {
  tls_validity validity;
  context_ = server_tls_context(files, validity);
  note_expiry(files, validity);
}

std::shared_ptr<ssl::context> tls_context_store::current() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return context_;
}

std::string tls_context_store::reload(const config::tls_files& files) {
  std::shared_ptr<ssl::context> fresh;
  tls_validity validity;
  try {
    fresh = server_tls_context(files, validity);
  } catch (const std::exception& e) {
    ++stats_.tls_reloads_failed;
    return e.what();
  }
  {
    std::lock_guard<std::mutex> guard(mutex_);
    context_ = std::move(fresh);
  }
  ++stats_.tls_reloads_ok;
  note_expiry(files, validity);
  return "";
}

void tls_context_store::note_expiry(const config::tls_files& files, const tls_validity& validity) {
  const std::int64_t cert = validity.cert_not_after, ca = validity.ca_not_after;
  stats_.tls_cert_not_after = cert;
  stats_.tls_ca_not_after = ca;
  const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
  for (const auto& [key, path, at] : {std::tuple{"listen.tls.cert", files.cert, cert},
                                      std::tuple{"listen.tls.client_ca", files.client_ca, ca}}) {
    if (at == 0) continue;
    if (at <= now)
      log::error("a TLS certificate has expired; clients will refuse it (or their certificates fail to verify)",
                 {{"key", key}, {"path", path}, {"not_after", utc(at)}});
    else if (at - now < 30 * 86400)
      log::warn("a TLS certificate expires within 30 days", {{"key", key}, {"path", path}, {"not_after", utc(at)}});
  }
}

}  // namespace weir
