#include "sinks/secret.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace weir {

std::string read_secret(const std::string& key, const std::string& file, const char* env_name) {
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error(key + " = " + file + ": cannot read the file");
    std::stringstream s;
    s << in.rdbuf();
    std::string v = s.str();
    while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.pop_back();
    return v;
  }
  const char* env = std::getenv(env_name);
  return env ? env : "";
}

}  // namespace weir
