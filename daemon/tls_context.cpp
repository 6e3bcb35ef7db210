#include "daemon/tls_context.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509err.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <tuple>

#include "config/regular_file.hpp"
#include "observability/log.hpp"

namespace weir {

namespace ssl = boost::asio::ssl;

namespace {

constexpr std::size_t max_tls_file_bytes = 1024 * 1024;

/// OpenSSL's reason for the last failure, with its queue emptied.
std::string openssl_reason() {
  const unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

[[noreturn]] void refuse(const char* key, const std::string& path, const std::string& why) {
  throw std::runtime_error(std::string(key) + " = " + path + ": " + why);
}

/// A TLS file must be a regular file (config/regular_file.hpp): OpenSSL
/// would block opening a FIFO put in its place, and with it a SIGHUP reload.
void require_readable(const char* key, const std::string& path) {
  if (const auto why = check_regular_file(path, max_tls_file_bytes); !why.empty())
    refuse(key, path, why + "; expected a PEM file");
}

/// notAfter of the first certificate in a PEM file, Unix seconds; 0 when unreadable.
std::int64_t pem_not_after(const std::string& path) {
  if (!check_regular_file(path, max_tls_file_bytes).empty()) return 0;
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return 0;
  X509* cert = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  ERR_clear_error();
  if (!cert) return 0;
  std::tm tm{};
  std::int64_t at = 0;
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert), &tm) == 1) at = static_cast<std::int64_t>(timegm(&tm));
  X509_free(cert);
  return at;
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

void load_mutual_tls(ssl::context& ctx, const tls_file_keys& keys, const std::string& cert, const std::string& key,
                     const std::string& ca) {
  require_readable(keys.cert, cert);
  require_readable(keys.key, key);
  require_readable(keys.ca, ca);
  SSL_CTX* native = ctx.native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_compression | ssl::context::single_dh_use);
  ERR_clear_error();
  const std::string mismatch = std::string("does not match the certificate in ") + keys.cert;
  if (SSL_CTX_use_certificate_chain_file(native, cert.c_str()) != 1)
    refuse(keys.cert, cert, "not a PEM certificate chain (" + openssl_reason() + ")");
  if (SSL_CTX_use_PrivateKey_file(native, key.c_str(), SSL_FILETYPE_PEM) != 1) {
    if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH) refuse(keys.key, key, mismatch);
    refuse(keys.key, key, "not a PEM private key, or one with a passphrase (" + openssl_reason() + ")");
  }
  if (SSL_CTX_check_private_key(native) != 1) refuse(keys.key, key, mismatch);
  if (SSL_CTX_load_verify_locations(native, ca.c_str(), nullptr) != 1)
    refuse(keys.ca, ca, "not a PEM CA certificate (" + openssl_reason() + ")");
  // The CA names a peer is told to choose its certificate by.
  if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(ca.c_str())) SSL_CTX_set_client_CA_list(native, names);
  ERR_clear_error();
  // A peer certificate is required, not merely checked when sent.
  SSL_CTX_set_verify(native, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
}

std::shared_ptr<ssl::context> make_server_tls_context(const config::tls_files& files) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  load_mutual_tls(*ctx, {"listen.tls.cert", "listen.tls.key", "listen.tls.client_ca"}, files.cert, files.key,
                  files.client_ca);
  // Session resumption with client verification needs an id context.
  static const unsigned char id_context[] = "weir-listen-tcp";
  SSL_CTX_set_session_id_context(ctx->native_handle(), id_context, sizeof id_context - 1);
  return ctx;
}

tls_context_store::tls_context_store(const config::tls_files& files, listener_stats& stats)
    : stats_(stats), context_(make_server_tls_context(files)) {
  note_expiry(files);
}

std::shared_ptr<ssl::context> tls_context_store::current() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return context_;
}

std::string tls_context_store::reload(const config::tls_files& files) {
  std::shared_ptr<ssl::context> fresh;
  try {
    fresh = make_server_tls_context(files);
  } catch (const std::exception& e) {
    ++stats_.tls_reloads_failed;
    return e.what();
  }
  {
    std::lock_guard<std::mutex> guard(mutex_);
    context_ = std::move(fresh);
  }
  ++stats_.tls_reloads_ok;
  note_expiry(files);
  return "";
}

void tls_context_store::note_expiry(const config::tls_files& files) {
  const std::int64_t cert = pem_not_after(files.cert), ca = pem_not_after(files.client_ca);
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
