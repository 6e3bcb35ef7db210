#include "files/pem.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <ctime>
#include <memory>

#include "files/regular_file.hpp"

namespace weir {

namespace {

struct bio_free {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct x509_free {
  void operator()(X509* x) const { X509_free(x); }
};
struct pkey_free {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using bio_ptr = std::unique_ptr<BIO, bio_free>;
using x509_ptr = std::unique_ptr<X509, x509_free>;

bio_ptr memory_bio(const std::string& pem) { return bio_ptr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()))); }

/// " (OpenSSL's reason for the last failure)", with its queue emptied.
std::string openssl_reason() {
  const std::string why = last_openssl_error();
  return why.empty() ? "" : " (" + why + ")";
}

/// Whether the only thing left in OpenSSL's queue is "no more PEM": the
/// normal end of a bundle.
bool at_end_of_pem() {
  const unsigned long e = ERR_peek_last_error();
  if (e == 0 || (ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE)) {
    ERR_clear_error();
    return true;
  }
  return false;
}

}  // namespace

std::string last_openssl_error() {
  const unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e == 0) return "";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

std::string read_pem_file(const std::string& path, std::string& out) {
  return read_regular_file(path, max_pem_file_bytes, out);
}

std::string use_certificate_chain_pem(SSL_CTX* ctx, const std::string& pem) {
  ERR_clear_error();
  auto bio = memory_bio(pem);
  x509_ptr leaf(PEM_read_bio_X509_AUX(bio.get(), nullptr, nullptr, nullptr));
  if (!leaf) return "no PEM certificate in it" + openssl_reason();
  if (SSL_CTX_use_certificate(ctx, leaf.get()) != 1) return "its certificate was refused" + openssl_reason();
  SSL_CTX_clear_chain_certs(ctx);
  while (X509* next = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    if (SSL_CTX_add0_chain_cert(ctx, next) != 1) {
      X509_free(next);
      return "a chain certificate was refused" + openssl_reason();
    }
  }
  if (!at_end_of_pem()) return "a chain certificate cannot be read" + openssl_reason();
  return "";
}

std::string use_private_key_pem(SSL_CTX* ctx, const std::string& pem) {
  ERR_clear_error();
  auto bio = memory_bio(pem);
  // No passphrase callback: a key with one is refused, not prompted for.
  std::unique_ptr<EVP_PKEY, pkey_free> key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, [](char*, int, int, void*) { return 0; }, nullptr));
  if (!key) return "not a PEM private key, or one with a passphrase" + openssl_reason();
  if (SSL_CTX_use_PrivateKey(ctx, key.get()) != 1) {
    if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH) {
      ERR_clear_error();
      return key_does_not_match;
    }
    return "the key was refused" + openssl_reason();
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    return key_does_not_match;
  }
  return "";
}

std::string trust_ca_pem(SSL_CTX* ctx, const std::string& pem, bool name_to_peers) {
  ERR_clear_error();
  auto bio = memory_bio(pem);
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  int count = 0;
  while (x509_ptr ca{PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)}) {
    if (X509_STORE_add_cert(store, ca.get()) != 1) {
      // The same CA twice in a bundle is not an error.
      const unsigned long e = ERR_peek_last_error();
      if (ERR_GET_REASON(e) != X509_R_CERT_ALREADY_IN_HASH_TABLE) return "a CA certificate was refused" + openssl_reason();
      ERR_clear_error();
    }
    if (name_to_peers && SSL_CTX_add_client_CA(ctx, ca.get()) != 1) return "a CA name was refused" + openssl_reason();
    ++count;
  }
  if (count == 0) return "no PEM CA certificate in it" + openssl_reason();
  if (!at_end_of_pem()) return "a CA certificate cannot be read" + openssl_reason();
  return "";
}

std::int64_t pem_not_after(const std::string& pem) {
  auto bio = memory_bio(pem);
  x509_ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  if (!cert) return 0;
  std::tm tm{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert.get()), &tm) != 1) return 0;
  return static_cast<std::int64_t>(timegm(&tm));
}

}  // namespace weir
