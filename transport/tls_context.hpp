#pragma once
// The server side of listen.tcp's mutual TLS: certificate, key and client CA
// read from their files into an OpenSSL context that requires a client
// certificate chaining to the CA, TLS 1.2 or later. SIGHUP reads the files
// again; handshakes from then on use the new context, established
// connections keep theirs, and a reload that fails keeps the old one.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "config/config.hpp"
#include "observability/listener_stats.hpp"

namespace weir {

/// The configuration keys that name a certificate, its key and the CA a
/// peer's certificate must chain to (for the messages).
struct tls_file_keys {
  const char* cert;
  const char* key;
  const char* ca;
};

/// notAfter of the certificate and of the CA loaded, Unix seconds (0: unknown).
struct tls_validity {
  std::int64_t cert_not_after = 0, ca_not_after = 0;
};

/// Loads `cert` (a chain), `key` and `ca` into `ctx`, and requires of every
/// peer a certificate that chains to `ca`, over TLS 1.2 or later; each file
/// is read once. Throws std::runtime_error naming the key, the file and what
/// is wrong with it.
tls_validity load_mutual_tls(boost::asio::ssl::context& ctx, const tls_file_keys& keys, const std::string& cert,
                             const std::string& key, const std::string& ca);

/// The context for `files`; throws std::runtime_error naming the key, the
/// file and what is wrong with it.
std::shared_ptr<boost::asio::ssl::context> make_server_tls_context(const config::tls_files& files);

class tls_context_store {
 public:
  /// Loads `files` at once (throws as make_server_tls_context does).
  tls_context_store(const config::tls_files& files, listener_stats& stats);

  std::shared_ptr<boost::asio::ssl::context> current() const;
  /// Reads `files` (the running configuration's, perhaps new paths) again.
  /// Returns "" when they are in use from the next handshake on, else why
  /// not (the previous context stays).
  std::string reload(const config::tls_files& files);

 private:
  /// Logs and exports the validity of what was loaded; warns when it has
  /// expired or expires within 30 days.
  void note_expiry(const config::tls_files& files, const tls_validity& validity);

  listener_stats& stats_;
  mutable std::mutex mutex_;
  std::shared_ptr<boost::asio::ssl::context> context_;
};

}  // namespace weir
