#include "config/sink_list.hpp"

namespace weir {

std::vector<sink_config> configured_sinks(const config& c) {
  if (!c.sinks.empty()) return c.sinks;
  sink_config only = c.sink;
  only.name = default_sink_name;
  return {only};
}

config with_only_sink(const config& c, const sink_config& s) {
  config out = c;
  out.sink = s;
  out.sinks.clear();
  return out;
}

bool sink_name_ok(const std::string& name) {
  if (name.empty() || name.size() > 32 || name[0] < 'a' || name[0] > 'z') return false;
  for (char ch : name)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-')) return false;
  return true;
}

std::string dead_letter_dir_name(const std::string& name) {
  return name == default_sink_name ? "dead_letter" : "dead_letter-" + name;
}

}  // namespace weir
