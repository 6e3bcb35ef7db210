#pragma once
// Certificates, keys and CAs go into an OpenSSL context from memory, read
// first as regular files within the time limit (files/regular_file.hpp):
// OpenSSL's own *_file loaders open whatever a path names and block on a
// FIFO or a file system that stops answering.
#include <openssl/ssl.h>

#include <cstdint>
#include <string>

namespace weir {

/// The largest certificate, key or CA bundle read.
inline constexpr std::size_t max_pem_file_bytes = 1024 * 1024;

/// Reads a PEM file as read_regular_file does: "" or why not.
std::string read_pem_file(const std::string& path, std::string& out);

/// Each puts a PEM text into `ctx` and returns "" or why not, with
/// OpenSSL's reason in brackets.
/// The first certificate is the context's own, the rest its chain.
std::string use_certificate_chain_pem(SSL_CTX* ctx, const std::string& pem);
/// What use_private_key_pem says of a key that is not the certificate's.
inline constexpr const char* key_does_not_match = "does not match";
/// The certificate must be set first: a key that is not its own is refused
/// with key_does_not_match.
std::string use_private_key_pem(SSL_CTX* ctx, const std::string& pem);
/// Every certificate in `pem` is trusted; with `name_to_peers`, their
/// subjects are also the CA names sent to a peer choosing its certificate.
std::string trust_ca_pem(SSL_CTX* ctx, const std::string& pem, bool name_to_peers);

/// OpenSSL's reason for its last failure ("" when none), its queue emptied.
std::string last_openssl_error();

/// notAfter of the first certificate in `pem`, Unix seconds; 0 when none.
std::int64_t pem_not_after(const std::string& pem);

}  // namespace weir
