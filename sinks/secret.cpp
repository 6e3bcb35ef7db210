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

reloadable_secret::reloadable_secret(std::string key, std::string file, const char* env_name)
    : key_(std::move(key)), file_(std::move(file)), env_name_(env_name), value_(read_secret(key_, file_, env_name_)) {}

std::string reloadable_secret::value() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return value_;
}

bool reloadable_secret::reload(std::string& error) {
  try {
    std::string fresh = read_secret(key_, file_, env_name_);
    if (fresh.empty()) {
      // Most likely caught mid-rotation (truncated, not yet written): an
      // empty secret would mean connecting without one.
      error = key_ + " = " + file_ + ": the file is empty";
      return false;
    }
    std::lock_guard<std::mutex> guard(mutex_);
    value_ = std::move(fresh);
    return true;
  } catch (const std::runtime_error& e) {
    error = e.what();
    return false;
  }
}

}  // namespace weir
