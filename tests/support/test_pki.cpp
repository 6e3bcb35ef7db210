#include "support/test_pki.hpp"

#include <fstream>
#include <stdexcept>

#include "support/daemon_process.hpp"

namespace weir::test {

test_pki::test_pki(std::filesystem::path dir) : dir_(std::move(dir)) { std::filesystem::create_directories(dir_); }

void test_pki::openssl(const std::vector<std::string>& args) {
  const auto r = run_binary("/usr/bin/openssl", args, dir_);
  if (r.exit_code != 0) throw std::runtime_error("openssl " + args.front() + " failed: " + r.err);
}

// EC keys: as good for a test as RSA, and far quicker to make under a sanitizer.
void test_pki::make_ca(const std::string& name) {
  openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
           name + ".key", "-out", name + ".pem", "-days", "2", "-subj", "/CN=" + name});
}

void test_pki::make_request(const std::string& name) {
  openssl({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", name + ".key",
           "-out", name + ".csr", "-subj", "/CN=" + name});
}

void test_pki::make_cert(const std::string& name, const std::string& ca, const std::vector<std::string>& names) {
  make_request(name);
  std::vector<std::string> args{"x509", "-req", "-in", name + ".csr", "-CA", ca + ".pem", "-CAkey", ca + ".key",
                                "-CAcreateserial", "-out", name + ".pem", "-days", "2"};
  if (write_names(name, names)) args.insert(args.end(), {"-extfile", name + ".ext"});
  openssl(args);
}

bool test_pki::write_names(const std::string& name, const std::vector<std::string>& names) {
  if (names.empty()) return false;
  std::string san;
  for (const auto& n : names) san += (san.empty() ? "" : ",") + n;
  std::ofstream(dir_ / (name + ".ext")) << "subjectAltName=" << san << "\n";
  return true;
}

void test_pki::make_expired_cert(const std::string& name, const std::string& ca, const std::vector<std::string>& names) {
  make_request(name);
  // `openssl x509` cannot backdate; `openssl ca` can, with a minimal CA setup.
  const std::string db = name + ".index", serial = name + ".serial";
  std::ofstream(dir_ / db).flush();
  std::ofstream(dir_ / serial) << "1000\n";
  std::ofstream(dir_ / (name + ".cnf")) << "[ca]\ndefault_ca = test\n[test]\ndatabase = " << db
                                        << "\nserial = " << serial << "\nnew_certs_dir = .\ndefault_md = sha256\n"
                                        << "policy = any\nunique_subject = no\n[any]\ncommonName = supplied\n";
  std::vector<std::string> args{"ca", "-batch", "-config", name + ".cnf", "-cert", ca + ".pem", "-keyfile",
                                ca + ".key", "-in", name + ".csr", "-out", name + ".pem", "-notext", "-startdate",
                                "20200101000000Z", "-enddate", "20200102000000Z"};
  if (write_names(name, names)) args.insert(args.end(), {"-extfile", name + ".ext"});
  openssl(args);
}

}  // namespace weir::test
