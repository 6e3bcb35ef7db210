// weir-ctl cluster certs: a private CA and one certificate per node, the
// one-command start of a cluster's authentication (docs/cluster.md). Each
// node certificate names its node as CN and DNS subjectAltName
// weir-node-<id> and serves both ends of a link (server and client auth).
// Keys are P-256, written 0600 and never overwritten; certificates 0644.
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/ctl_commands.hpp"

namespace weir::ctl {

namespace {

using key_ptr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using cert_ptr = std::unique_ptr<X509, decltype(&X509_free)>;

[[noreturn]] void openssl_failed(const std::string& what) {
  char buf[256] = "unknown OpenSSL error";
  if (const unsigned long e = ERR_get_error()) ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  throw std::runtime_error(what + ": " + buf);
}

key_ptr new_key() {
  key_ptr key{EVP_EC_gen("P-256"), EVP_PKEY_free};
  if (!key) openssl_failed("cannot make a key");
  return key;
}

void add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (!ext || X509_add_ext(cert, ext, -1) != 1) openssl_failed(std::string("cannot add ") + OBJ_nid2sn(nid));
  X509_EXTENSION_free(ext);
}

/// A certificate for `key` named `cn`, signed by `issuer_key` (as `issuer`,
/// or itself when null), valid for `days`.
cert_ptr make_cert(EVP_PKEY* key, const std::string& cn, X509* issuer, EVP_PKEY* issuer_key, long days, bool ca) {
  cert_ptr cert{X509_new(), X509_free};
  if (!cert) openssl_failed("cannot make a certificate");
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) openssl_failed("cannot make a serial number");
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);  // clocks a little behind still accept it
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), days * 86400);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : name);
  X509* signer = issuer ? issuer : cert.get();
  if (ca) {
    add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
    add_extension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    add_extension(cert.get(), signer, NID_key_usage, "critical,digitalSignature");
    add_extension(cert.get(), signer, NID_ext_key_usage, "serverAuth,clientAuth");
    add_extension(cert.get(), signer, NID_subject_alt_name, ("DNS:" + cn).c_str());
  }
  add_extension(cert.get(), signer, NID_subject_key_identifier, "hash");
  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) == 0) openssl_failed("cannot sign " + cn);
  return cert;
}

/// Writes a new file (never one that exists) with `mode`, through `write`.
template <class Write>
void write_new(const std::filesystem::path& path, mode_t mode, Write write) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) throw std::runtime_error(path.string() + ": " + std::strerror(errno));
  ::fchmod(fd, mode);  // whatever the umask
  std::FILE* f = ::fdopen(fd, "w");
  if (!f) {
    ::close(fd);
    throw std::runtime_error(path.string() + ": " + std::strerror(errno));
  }
  const bool ok = write(f) == 1;
  const bool flushed = std::fflush(f) == 0 && ::fsync(fd) == 0;
  std::fclose(f);
  if (!ok || !flushed) throw std::runtime_error(path.string() + ": cannot write it");
}

void write_key(const std::filesystem::path& path, EVP_PKEY* key) {
  write_new(path, 0600, [&](std::FILE* f) { return PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr); });
}
void write_cert(const std::filesystem::path& path, X509* cert) {
  write_new(path, 0644, [&](std::FILE* f) { return PEM_write_X509(f, cert); });
}

cert_ptr read_cert(const std::filesystem::path& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) throw std::runtime_error(path.string() + ": " + std::strerror(errno));
  cert_ptr cert{PEM_read_X509(f, nullptr, nullptr, nullptr), X509_free};
  std::fclose(f);
  if (!cert) openssl_failed(path.string() + ": not a PEM certificate");
  return cert;
}
key_ptr read_key(const std::filesystem::path& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) throw std::runtime_error(path.string() + ": " + std::strerror(errno));
  key_ptr key{PEM_read_PrivateKey(f, nullptr, nullptr, nullptr), EVP_PKEY_free};
  std::fclose(f);
  if (!key) openssl_failed(path.string() + ": not a PEM private key (or one with a passphrase)");
  return key;
}

/// "1,2,3" or "1-3" or a mix: node ids 1 to 65535.
std::set<std::uint16_t> parse_nodes(const std::string& text) {
  std::set<std::uint16_t> out;
  std::size_t at = 0;
  auto number = [&](std::size_t from, std::size_t to) -> std::uint16_t {
    const std::string part = text.substr(from, to - from);
    if (part.empty() || part.size() > 5 || part.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument("\"" + part + "\" is not a node id");
    const unsigned long n = std::stoul(part);
    if (n < 1 || n > 65535) throw std::invalid_argument(part + " is not a node id from 1 to 65535");
    return static_cast<std::uint16_t>(n);
  };
  while (at <= text.size()) {
    std::size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    const std::size_t dash = text.find('-', at);
    if (dash != std::string::npos && dash < end) {
      const auto lo = number(at, dash), hi = number(dash + 1, end);
      if (lo > hi || hi - lo > 1000) throw std::invalid_argument(text.substr(at, end - at) + " is not a range of up to 1000 ids");
      for (unsigned n = lo; n <= hi; ++n) out.insert(static_cast<std::uint16_t>(n));
    } else {
      out.insert(number(at, end));
    }
    at = end + 1;
  }
  return out;
}

}  // namespace

const char* cluster_certs_help = R"(Usage: weir-ctl cluster certs --out DIR --nodes LIST [--days N]

Makes what a cluster's nodes prove themselves with: a private CA (DIR/ca.pem,
DIR/ca.key) and, for each node id in LIST, DIR/node<id>.pem and
DIR/node<id>.key, a certificate that names the node weir-node-<id> (CN and
DNS subjectAltName), signed by the CA. Give node N:
  cluster.tls.cert: DIR/node<N>.pem
  cluster.tls.key:  DIR/node<N>.key
  cluster.tls.ca:   DIR/ca.pem
Keys are written 0600, and no file is ever overwritten. When DIR already
holds ca.pem and ca.key, they sign the new nodes (add a node to a cluster,
or replace a node's certificate after removing its two files). Keep ca.key
off the nodes: anyone who has it can make a member.

--out DIR     where the files go (made 0700 if missing)
--nodes LIST  node ids: 1,2,3 or 1-5 or a mix
--days N      how long the certificates are valid (default 825; the CA: 3650)

Exit status: 0; 1 a file exists or cannot be written; 2 a usage error.

Examples:
  weir-ctl cluster certs --out /etc/weir/cluster --nodes 1,2,3
  weir-ctl cluster certs --out /etc/weir/cluster --nodes 4
)";

int cluster_certs(const std::vector<std::string>& args) {
  std::string out;
  std::string nodes_text;
  long days = 825;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::fputs(cluster_certs_help, stdout);
      return 0;
    }
    if (a != "--out" && a != "--nodes" && a != "--days") return usage_error("cluster certs", "unknown option " + a);
    if (i + 1 >= args.size()) return usage_error("cluster certs", a + " needs a value");
    const std::string& v = args[++i];
    if (a == "--out") out = v;
    if (a == "--nodes") nodes_text = v;
    if (a == "--days") {
      if (v.empty() || v.size() > 5 || v.find_first_not_of("0123456789") != std::string::npos || std::stol(v) < 1)
        return usage_error("cluster certs", "--days " + v + ": expected a number of days from 1 to 99999");
      days = std::stol(v);
    }
  }
  if (out.empty()) return usage_error("cluster certs", "needs --out DIR");
  if (nodes_text.empty()) return usage_error("cluster certs", "needs --nodes, e.g. --nodes 1,2,3");
  std::set<std::uint16_t> nodes;
  try {
    nodes = parse_nodes(nodes_text);
  } catch (const std::exception& e) {
    return usage_error("cluster certs", "--nodes " + nodes_text + ": " + e.what());
  }
  try {
    const std::filesystem::path dir(out);
    if (!std::filesystem::exists(dir)) {
      std::filesystem::create_directories(dir);
      std::filesystem::permissions(dir, std::filesystem::perms::owner_all);
    }
    for (auto n : nodes)
      for (const char* ext : {".pem", ".key"})
        if (std::filesystem::exists(dir / ("node" + std::to_string(n) + ext)))
          throw std::runtime_error((dir / ("node" + std::to_string(n) + ext)).string() +
                                   " exists; remove node" + std::to_string(n) + ".pem and .key to make new ones");
    const bool have_ca = std::filesystem::exists(dir / "ca.pem") || std::filesystem::exists(dir / "ca.key");
    key_ptr ca_key{nullptr, EVP_PKEY_free};
    cert_ptr ca{nullptr, X509_free};
    if (have_ca) {
      ca = read_cert(dir / "ca.pem");
      ca_key = read_key(dir / "ca.key");
      if (X509_check_private_key(ca.get(), ca_key.get()) != 1)
        throw std::runtime_error((dir / "ca.key").string() + " is not the key of " + (dir / "ca.pem").string());
      std::printf("using the CA in %s\n", (dir / "ca.pem").c_str());
    } else {
      ca_key = new_key();
      // A name of its own: a chain is built by names, and two clusters' CAs
      // of one name would fail as a bad signature instead of an unknown CA.
      unsigned char tag[4];
      if (RAND_bytes(tag, sizeof tag) != 1) openssl_failed("cannot make the CA's name");
      char name[64];
      std::snprintf(name, sizeof name, "weir cluster CA %02x%02x%02x%02x", tag[0], tag[1], tag[2], tag[3]);
      ca = make_cert(ca_key.get(), name, nullptr, ca_key.get(), 3650, true);
      write_key(dir / "ca.key", ca_key.get());
      write_cert(dir / "ca.pem", ca.get());
      std::printf("made %s and %s (keep ca.key off the nodes)\n", (dir / "ca.pem").c_str(), (dir / "ca.key").c_str());
    }
    for (auto n : nodes) {
      const std::string name = "weir-node-" + std::to_string(n);
      auto key = new_key();
      auto cert = make_cert(key.get(), name, ca.get(), ca_key.get(), days, false);
      const auto base = dir / ("node" + std::to_string(n));
      write_key(base.string() + ".key", key.get());
      write_cert(base.string() + ".pem", cert.get());
      std::printf("made %s.pem and %s.key for %s\n", base.c_str(), base.c_str(), name.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weir-ctl cluster certs: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace weir::ctl
