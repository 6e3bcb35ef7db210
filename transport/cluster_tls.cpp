#include "transport/cluster_tls.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <stdexcept>
#include <string_view>

#include "config/config.hpp"
#include "transport/tls_context.hpp"

namespace weir {

namespace ssl = boost::asio::ssl;

namespace {

constexpr std::string_view prefix = "weir-node-";

/// The id in "weir-node-<id>" (no sign, no leading zero, 1 to 65535).
std::optional<std::uint16_t> parse_node_name(std::string_view name) {
  if (name.size() <= prefix.size() || name.size() > prefix.size() + 5 || name.substr(0, prefix.size()) != prefix)
    return std::nullopt;
  const auto digits = name.substr(prefix.size());
  if (digits[0] == '0') return std::nullopt;
  std::uint32_t id = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    id = id * 10 + static_cast<std::uint32_t>(c - '0');
  }
  if (id < 1 || id > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(id);
}

/// Collects ids into `found`; false when two differ.
bool note(std::optional<std::uint16_t>& found, std::optional<std::uint16_t> id) {
  if (!id) return true;
  if (found && *found != *id) return false;
  found = id;
  return true;
}

std::string_view view_of(const ASN1_STRING* s) {
  return {reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)), static_cast<std::size_t>(ASN1_STRING_length(s))};
}

}  // namespace

std::string node_certificate_name(std::uint16_t node) { return std::string(prefix) + std::to_string(node); }

std::optional<std::uint16_t> node_named_by(X509* cert) {
  if (!cert) return std::nullopt;
  std::optional<std::uint16_t> found;
  bool consistent = true;
  if (auto* names = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr))) {
    for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
      const GENERAL_NAME* n = sk_GENERAL_NAME_value(names, i);
      if (n->type == GEN_DNS) consistent = note(found, parse_node_name(view_of(n->d.dNSName))) && consistent;
    }
    GENERAL_NAMES_free(names);
  }
  X509_NAME* subject = X509_get_subject_name(cert);
  for (int at = -1; subject && (at = X509_NAME_get_index_by_NID(subject, NID_commonName, at)) >= 0;)
    consistent = note(found, parse_node_name(view_of(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, at))))) &&
                 consistent;
  if (!consistent) return std::nullopt;
  return found;
}

std::shared_ptr<ssl::context> make_cluster_tls_context(const config& cfg) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls);
  load_mutual_tls(*ctx, {"cluster.tls.cert", "cluster.tls.key", "cluster.tls.ca"}, cfg.cluster.tls.cert,
                  cfg.cluster.tls.key, cfg.cluster.tls.ca);
  SSL_CTX* native = ctx->native_handle();
  // A node's peers take it for whom its certificate names: it must name this node.
  const auto own = node_named_by(SSL_CTX_get0_certificate(native));
  const auto node = static_cast<std::uint16_t>(cfg.cluster.node_id);
  if (own != node)
    throw std::runtime_error("cluster.tls.cert = " + cfg.cluster.tls.cert + ": names " +
                             (own ? node_certificate_name(*own) : std::string("no weir-node-<id>")) +
                             ", expected " + node_certificate_name(node) +
                             " (its CN or a DNS subjectAltName) for cluster.node_id " + std::to_string(node));
  // Its peers check it against the same CA: one that does not chain to it
  // would start and never join.
  X509_STORE_CTX* check = X509_STORE_CTX_new();
  STACK_OF(X509)* chain = nullptr;
  SSL_CTX_get0_chain_certs(native, &chain);
  const bool chains = check && X509_STORE_CTX_init(check, SSL_CTX_get_cert_store(native),
                                                   SSL_CTX_get0_certificate(native), chain) == 1 &&
                      X509_verify_cert(check) == 1;
  const std::string why = check ? X509_verify_cert_error_string(X509_STORE_CTX_get_error(check)) : "out of memory";
  X509_STORE_CTX_free(check);
  ERR_clear_error();
  if (!chains)
    throw std::runtime_error("cluster.tls.cert = " + cfg.cluster.tls.cert + ": does not chain to cluster.tls.ca " +
                             cfg.cluster.tls.ca + " (" + why + "); peers would refuse it");
  static const unsigned char id_context[] = "weir-cluster";
  SSL_CTX_set_session_id_context(native, id_context, sizeof id_context - 1);
  return ctx;
}

}  // namespace weir
