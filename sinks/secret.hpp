#pragma once
// Secrets (passwords, tokens) come from a file or the environment, never from
// the command line or the config file itself, and are never logged.
#include <string>

namespace weir {

/// The secret in `file` (one trailing newline dropped) when `file` is set,
/// else the value of environment variable `env_name`, else "". Throws
/// std::runtime_error naming `key` (never the content) when the file is unreadable.
std::string read_secret(const std::string& key, const std::string& file, const char* env_name);

}  // namespace weir
