#pragma once
// Private CAs and certificates made at test time with the openssl tool:
// nothing is checked in, and nothing outlives the test's directory.
#include <filesystem>
#include <string>
#include <vector>

namespace weir::test {

class test_pki {
 public:
  explicit test_pki(std::filesystem::path dir);

  /// A self-signed CA: `name`.pem and `name`.key.
  void make_ca(const std::string& name);
  /// `name`.pem and `name`.key, signed by `ca`, valid for two days. `names`
  /// go in subjectAltName ("DNS:localhost", "IP:127.0.0.1"); a server
  /// certificate needs them, a client one may have none.
  void make_cert(const std::string& name, const std::string& ca, const std::vector<std::string>& names = {});
  /// Signed by `ca`, with `names` as make_cert, but valid only for a day of 2020: expired.
  void make_expired_cert(const std::string& name, const std::string& ca, const std::vector<std::string>& names = {});

  std::string pem(const std::string& name) const { return (dir_ / (name + ".pem")).string(); }
  std::string key(const std::string& name) const { return (dir_ / (name + ".key")).string(); }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  /// Runs openssl in the directory; throws with its stderr when it fails.
  void openssl(const std::vector<std::string>& args);
  /// `name`.key and `name`.csr.
  void make_request(const std::string& name);
  /// Writes `name`.ext with `names` as subjectAltName; false when there are none.
  bool write_names(const std::string& name, const std::vector<std::string>& names);

  std::filesystem::path dir_;
};

}  // namespace weir::test
