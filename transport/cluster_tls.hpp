#pragma once
// Who a cluster node is: the node id its certificate names. A node's
// certificate chains to cluster.tls.ca and names it "weir-node-<id>", as its
// subject CN or a DNS subjectAltName; anything else is no member. Both ends
// of a cluster link use one context: this node's certificate and key, a peer
// certificate required and checked against cluster.tls.ca, TLS 1.2 or later.
#include <openssl/x509.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "config/config.hpp"

namespace weir {

/// "weir-node-<id>": the name a node's certificate carries.
std::string node_certificate_name(std::uint16_t node);

/// The node id `cert` names (DNS subjectAltNames first, then the subject
/// CN), 1 to 65535; nothing when it names none, or names two different ids.
std::optional<std::uint16_t> node_named_by(X509* cert);

/// The context of cluster links, from cluster.tls; throws std::runtime_error
/// naming the key and file when one cannot be used, or when the certificate
/// does not name cluster.node_id.
std::shared_ptr<boost::asio::ssl::context> make_cluster_tls_context(const config& cfg);

}  // namespace weir
