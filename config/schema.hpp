#pragma once
// The table of every configuration key: its type, allowed range, default and
// meaning. Loading, validation, --print-config and docs/configuration.md are
// all driven by this one table.
#include <functional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/config.hpp"

namespace weir {

struct setting {
  std::string key;           // dotted path, e.g. "listen.read_timeout_ms"
  std::string allowed;       // what a valid value looks like, for errors and docs
  std::string default_yaml;  // default value as YAML text
  std::string help;          // one line for docs
  bool structured = false;   // a list or map: env / --set values are YAML flow text
  bool secret = false;       // redacted by --print-config
  /// Stores the value; false when the node is not an allowed value.
  std::function<bool(config&, const YAML::Node&)> assign;
  std::function<YAML::Node(const config&)> show;
};

const std::vector<setting>& settings();

/// nullptr when `key` names no setting.
const setting* find_setting(const std::string& key);

/// A key's earlier name: still read, with a deprecation line, so that a
/// configuration written for an earlier version keeps working.
struct renamed_key {
  const char* old_key;
  const char* new_key;
};
const std::vector<renamed_key>& renamed_keys();

/// The setting `old_key` was renamed to; nullptr when it names none.
const setting* renamed_setting(const std::string& old_key);

/// True when `key` is a section that holds settings ("drain", "sink.retry"),
/// or held one under an earlier name ("drain.retry").
bool is_section(const std::string& key);

/// WEIR_<SECTION>__<KEY>: "sink.retry.initial_ms" -> "WEIR_SINK__RETRY__INITIAL_MS".
std::string env_name(const std::string& key);

config default_config();

}  // namespace weir
