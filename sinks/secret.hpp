#pragma once
// Secrets (passwords, tokens) come from a file or the environment, never from
// the command line or the config file itself, and are never logged.
#include <mutex>
#include <string>

namespace weir {

/// The secret in `file` (one trailing newline dropped) when `file` is set,
/// else the value of environment variable `env_name`, else "". Throws
/// std::runtime_error naming `key` (never the content) when the file is unreadable.
std::string read_secret(const std::string& key, const std::string& file, const char* env_name);

/// A secret that a reload (SIGHUP) can read again from its file: a rotated
/// password or token is used from the next connection or request on, without
/// a restart. Safe to read from any thread.
class reloadable_secret {
 public:
  /// Reads it once, as read_secret does (and throws as it does).
  reloadable_secret(std::string key, std::string file, const char* env_name);

  std::string value() const;
  /// The config key that names its file ("sink.postgres.password_file").
  const std::string& key() const { return key_; }
  /// True when it comes from a file (one from the environment cannot change while the process runs).
  bool from_file() const { return !file_.empty(); }
  /// Reads the file again. False, the old value kept and `error` set (never
  /// the content), when it cannot be read or is empty.
  bool reload(std::string& error);

 private:
  std::string key_, file_;
  const char* env_name_;
  mutable std::mutex mutex_;
  std::string value_;
};

}  // namespace weir
