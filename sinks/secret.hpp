#pragma once
// Secrets (passwords, tokens) come from a file or the environment, never from
// the command line or the config file itself, and are never logged. A secret
// file must be a regular file (a symlink to one is followed) of at most
// 64 KiB, read without blocking (files/regular_file.hpp), and its content
// must be a valid value for where it goes: a bearer token as RFC 6750 spells
// one, a password without control characters. Anything else is refused with
// a reason that never shows the content.
#include <mutex>
#include <string>

namespace weir {

/// What a secret is sent as, and so what a valid one looks like.
enum class secret_use {
  password,      // no control characters
  bearer_token,  // RFC 6750 b64token: letters, digits, -._~+/ then '=' padding
};

/// The largest secret file read.
inline constexpr std::size_t max_secret_bytes = 64 * 1024;
/// The longest bearer token taken: an Authorization header past a few KiB is refused by HTTP servers.
inline constexpr std::size_t max_bearer_token_bytes = 8 * 1024;

/// Why `value` is not a valid secret for `use`, or "".
std::string invalid_secret(const std::string& value, secret_use use);

/// The secret in `file` (one trailing newline dropped) when `file` is set,
/// else the value of environment variable `env_name`, else "". Throws
/// std::runtime_error naming `key` (never the content) when the file cannot
/// be read as a secret or the value is not valid for `use`.
std::string read_secret(const std::string& key, const std::string& file, const char* env_name,
                        secret_use use = secret_use::password);

/// A secret that a reload (SIGHUP) can read again from its file: a rotated
/// password or token is used from the next connection or request on, without
/// a restart. Safe to read from any thread.
class reloadable_secret {
 public:
  /// Reads it once, as read_secret does (and throws as it does, and when
  /// its file is empty).
  reloadable_secret(std::string key, std::string file, const char* env_name, secret_use use = secret_use::password);

  std::string value() const;
  /// The config key that names its file ("sink.postgres.password_file").
  const std::string& key() const { return key_; }
  /// True when it comes from a file (one from the environment cannot change while the process runs).
  bool from_file() const { return !file_.empty(); }
  /// Reads the file again. False, the old value kept and `error` set (never
  /// the content), when it cannot be read, is empty or is not valid.
  bool reload(std::string& error);

 private:
  std::string key_, file_;
  const char* env_name_;
  secret_use use_;
  mutable std::mutex mutex_;
  std::string value_;
};

}  // namespace weir
