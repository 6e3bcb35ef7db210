#include "sinks/secret.hpp"

#include <cstdlib>
#include <stdexcept>

#include "files/regular_file.hpp"

namespace weir {

std::string invalid_secret(const std::string& value, secret_use use) {
  if (use == secret_use::bearer_token) {
    // RFC 6750 section 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
    std::size_t i = 0;
    auto token_char = [](unsigned char c) {
      return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
             c == '_' || c == '~' || c == '+' || c == '/';
    };
    while (i < value.size() && token_char(static_cast<unsigned char>(value[i]))) ++i;
    const bool chars = i > 0;
    while (i < value.size() && value[i] == '=') ++i;
    if (value.size() > max_bearer_token_bytes)
      return "longer than " + std::to_string(max_bearer_token_bytes) + " bytes (HTTP servers refuse such a header)";
    if (!chars || i != value.size())
      return "not a bearer token (RFC 6750: letters, digits and -._~+/, then '=' padding; nothing else, no spaces "
             "or line breaks)";
    return "";
  }
  for (unsigned char c : value)
    if (c < 0x20 || c == 0x7f) return "holds a control character (a line break, a NUL...): not a password";
  return "";
}

std::string read_secret(const std::string& key, const std::string& file, const char* env_name, secret_use use) {
  std::string v;
  std::string source = key + " = " + file;
  if (!file.empty()) {
    if (const auto why = read_regular_file(file, max_secret_bytes, v); !why.empty())
      throw std::runtime_error(source + ": " + why + "; expected a regular file holding the secret");
    // Line endings at its end are the file's, not the secret's.
    while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.pop_back();
  } else {
    const char* env = std::getenv(env_name);
    if (!env) return "";
    v = env;
    source = std::string(env_name);
  }
  if (v.empty()) return v;
  if (const auto why = invalid_secret(v, use); !why.empty())
    throw std::runtime_error(source + ": " + why + " (its content is not shown)");
  return v;
}

reloadable_secret::reloadable_secret(std::string key, std::string file, const char* env_name, secret_use use)
    : key_(std::move(key)),
      file_(std::move(file)),
      env_name_(env_name),
      use_(use),
      value_(read_secret(key_, file_, env_name_, use_)) {
  // A file named for a secret that holds none would mean requests or logins
  // without one: refused at start as on a reload.
  if (!file_.empty() && value_.empty())
    throw std::runtime_error(key_ + " = " + file_ + ": the file is empty; expected the secret");
}

std::string reloadable_secret::value() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return value_;
}

bool reloadable_secret::reload(std::string& error) {
  try {
    std::string fresh = read_secret(key_, file_, env_name_, use_);
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
