#pragma once
// Builds the effective configuration: built-in defaults, then the YAML file,
// then WEIR_<SECTION>__<KEY> environment variables, then --set overrides.
// Every failure is a config_error whose message is one line naming the key,
// the value, where it came from and what is allowed.
#include <stdexcept>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace weir {

struct config_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct config_sources {
  std::string file;                  // YAML file to read ("" = none)
  bool file_required = true;         // false: a missing file means "defaults"
  std::vector<std::string> env;      // "NAME=value" entries, usually from environ
  std::vector<std::string> overrides;  // "section.key=value" from --set
};

config load_config(const config_sources& sources);

/// The effective configuration as YAML, secrets redacted.
std::string render_config(const config& c);

/// A Markdown table of every key: default, allowed values, environment
/// variable and meaning (the body of docs/configuration.md).
std::string describe_config();

/// Checks that need more than one key; throws config_error.
void validate_config(const config& c);

/// Copies of the process environment, for config_sources::env.
std::vector<std::string> process_environment();

}  // namespace weir
