#include "config/loader.hpp"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "config/credentials.hpp"
#include "config/schema.hpp"
#include "config/sink_list.hpp"
#include "files/regular_file.hpp"
#include "config/value_parsing.hpp"

extern char** environ;

namespace weir {

namespace {

std::string quoted(const YAML::Node& n) {
  if (n.IsScalar()) return quoted_text(n.Scalar());
  if (n.IsNull()) return "(empty)";
  YAML::Emitter e;
  e << YAML::Flow << n;
  return printable(e.c_str());
}

std::string at(const std::string& file, const YAML::Mark& m) {
  return file + " line " + std::to_string(m.line + 1) + ", column " + std::to_string(m.column + 1);
}

/// Where each key given was set (a file's line, an environment variable,
/// --set): what a rule across keys names when it refuses their values.
using key_origins = std::map<std::string, std::string>;

void assign_or_throw(config& c, key_origins& origins, const setting& s, const YAML::Node& value,
                     const std::string& where) {
  origins[s.key] = where;
  if (!s.assign(c, value))
    throw config_error("config error: " + s.key + " = " + (s.secret ? "(redacted)" : redact_credentials(quoted(value))) +
                       " (" + where + "): expected " + s.allowed);
}

/// The setting `key` names, or the one it names under an earlier name (a
/// deprecation line is then added to `c`); nullptr when none.
const setting* setting_named(config& c, const std::string& key, const std::string& where) {
  if (const setting* s = find_setting(key)) return s;
  const setting* s = renamed_setting(key);
  if (s) c.deprecations.push_back(key + " is now " + s->key + " (" + where + "); the old name is still read, and will not be in a later release");
  return s;
}

/// Where in the file each key was given: YAML keeps both of two equal keys
/// (and a dotted key beside its section's), and the last would silently win.
/// A section may come twice (files made by concatenation); a key may not.
using keys_given = std::map<std::string, YAML::Mark>;

/// The `sinks:` list as the last source that gave it did (a file, then the
/// environment, then --set, as for any key). Its elements are read once
/// every source is, on top of the final `sink:` section.
struct sink_list_given {
  YAML::Node list;
  std::string source;  // the file, "environment WEIR_SINKS" or "--set": what its marks are in
};

constexpr const char* sink_list_key = "sinks";
constexpr std::size_t max_sinks = 64;

void apply_yaml_map(config& c, key_origins& origins, keys_given& given, const YAML::Node& map,
                    const std::string& prefix, const std::string& file, sink_list_given* sink_list = nullptr) {
  for (const auto& kv : map) {
    if (!kv.first.IsScalar())
      throw config_error("config error: " + at(file, kv.first.Mark()) + ": keys must be plain names");
    const std::string key = prefix.empty() ? kv.first.Scalar() : prefix + "." + kv.first.Scalar();
    if (key == sink_list_key && sink_list) {
      if (const auto [first, fresh] = given.emplace(key, kv.first.Mark()); !fresh)
        throw config_error("config error: sinks is given twice (" + at(file, first->second) + " and " +
                           at(file, kv.first.Mark()) + "); expected one list of sinks");
      *sink_list = {kv.second, file};
    } else if (const setting* s = setting_named(c, key, at(file, kv.first.Mark()))) {
      if (const auto [first, fresh] = given.emplace(s->key, kv.first.Mark()); !fresh)
        throw config_error("config error: " + s->key + " is given twice (" + at(file, first->second) + " and " +
                           at(file, kv.first.Mark()) + "); expected each key once (an earlier name counts)");
      assign_or_throw(c, origins, *s, kv.second, at(file, kv.second.Mark()));
    } else if (is_section(key)) {
      if (kv.second.IsMap())
        apply_yaml_map(c, origins, given, kv.second, key, file);
      else if (!kv.second.IsNull())
        throw config_error("config error: " + key + " (" + at(file, kv.second.Mark()) +
                           "): expected a section (a mapping of keys), got " + quoted(kv.second));
    } else {
      throw config_error("config error: unknown key " + key + " (" + at(file, kv.first.Mark()) +
                         "); see docs/configuration.md for the keys weir knows");
    }
  }
}

/// yaml-cpp's words for a parse failure; its nesting limit says only "bad file".
std::string yaml_problem(const YAML::ParserException& e) {
  if (const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e))
    return "YAML nested too deeply (the parser stops at " + std::to_string(deep->depth()) + " levels)";
  return "YAML syntax error: " + e.msg;
}

/// A configuration is a few KiB; anything near this is not one.
constexpr std::uintmax_t max_config_bytes = 1 << 20;

void apply_file(config& c, key_origins& origins, const config_sources& src, sink_list_given& sink_list) {
  // Read as a regular file (files/regular_file.hpp): a FIFO would block the
  // open, a device (/dev/zero) would be read until memory ran out, a
  // directory reads as empty (running on defaults), and a file system that
  // stopped answering would stall a reload.
  std::string content;
  if (const auto why = read_regular_file(src.file, max_config_bytes, content); !why.empty()) {
    if (!src.file_required && names_missing_file(why)) return;
    const std::string cannot = "cannot read it: ";
    if (why.starts_with(cannot))
      throw config_error("config error: cannot read config file " + src.file + ": " + why.substr(cannot.size()));
    throw config_error("config error: config file " + src.file + ": " + why + "; expected a YAML file of at most 1 MiB");
  }
  YAML::Node root;
  try {
    root = YAML::Load(content);
  } catch (const YAML::ParserException& e) {
    throw config_error("config error: " + at(src.file, e.mark) + ": " + yaml_problem(e));
  }
  if (root.IsNull()) return;
  if (!root.IsMap())
    throw config_error("config error: " + src.file + ": the top level must be a mapping of sections");
  keys_given given;
  apply_yaml_map(c, origins, given, root, "", src.file, &sink_list);
}

/// Text from the environment or --set: scalars are taken verbatim (so "yes",
/// "#1" or "" mean exactly that); lists and maps are YAML flow text.
YAML::Node node_from_text(const setting& s, const std::string& text, const std::string& where) {
  if (!s.structured) return YAML::Node(text);
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw config_error("config error: " + s.key + " = " + quoted_text(text) + " (" + where + "): " + yaml_problem(e));
  }
}

/// The key whose variable `name` would be with each "__" written "_"
/// (WEIR_INGEST_SHARDS for WEIR_INGEST__SHARDS), if any.
const setting* single_underscore_match(const std::string& name) {
  for (const auto& s : settings()) {
    std::string single = env_name(s.key);
    if (single.find("__") == std::string::npos) continue;
    for (auto at = single.find("__"); at != std::string::npos; at = single.find("__", at)) single.erase(at, 1);
    if (single == name) return &s;
  }
  return nullptr;
}

/// A `sinks:` list given as YAML flow text (the environment, --set).
sink_list_given sink_list_from_text(const std::string& text, const std::string& where) {
  try {
    return {YAML::Load(text), where};
  } catch (const YAML::ParserException& e) {
    throw config_error("config error: sinks = " + quoted_text(text) + " (" + where + "): " + yaml_problem(e));
  }
}

void apply_env(config& c, key_origins& origins, const config_sources& src, sink_list_given& sink_list) {
  for (const auto& entry : src.env) {
    if (entry.rfind("WEIR_", 0) != 0) continue;
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = entry.substr(0, eq), value = entry.substr(eq + 1);
    if (name == env_name(sink_list_key)) {
      sink_list = sink_list_from_text(value, "environment " + name);
      continue;
    }
    const setting* match = nullptr;
    for (auto& s : settings())
      if (env_name(s.key) == name) match = &s;
    for (const auto& r : renamed_keys())
      if (!match && env_name(r.old_key) == name) match = setting_named(c, r.old_key, "environment " + name);
    if (match) {
      const std::string where = "environment " + name;
      assign_or_throw(c, origins, *match, node_from_text(*match, value, where), where);
    } else if (name.find("__") != std::string::npos) {
      // Looks like a config variable but names no key: a typo must not be ignored.
      throw config_error("config error: environment " + name +
                         " names no configuration key; see docs/configuration.md");
    } else if (const setting* meant = single_underscore_match(name)) {
      throw config_error("config error: environment " + name + " names no configuration key; expected " +
                         env_name(meant->key) + " for " + meant->key + " (a section and its key are joined by two underscores)");
    }
  }
}

void apply_overrides(config& c, key_origins& origins, const config_sources& src, sink_list_given& sink_list) {
  for (const auto& entry : src.overrides) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0)
      throw config_error("config error: --set " + entry + ": expected section.key=value");
    const std::string key = entry.substr(0, eq), value = entry.substr(eq + 1);
    if (key == sink_list_key) {
      sink_list = sink_list_from_text(value, "--set");
      continue;
    }
    const setting* s = setting_named(c, key, "--set");
    if (!s)
      throw config_error("config error: --set " + entry + ": unknown key " + key +
                         "; see docs/configuration.md");
    const std::string where = "--set";
    assign_or_throw(c, origins, *s, node_from_text(*s, value, where), where);
  }
}

/// Reads each `sinks:` element on top of the `sink:` section, into c.sinks.
/// An element's keys are the `sink:` section's (type, postgres.conninfo,
/// retry.max_ms...), and `name`.
void apply_sink_list(config& c, const sink_list_given& given) {
  // Empty (or null): no list, the sink: section is the one sink.
  if (!given.list || given.list.IsNull() || (given.list.IsSequence() && given.list.size() == 0)) return;
  if (!given.list.IsSequence())
    throw config_error("config error: sinks = " + quoted(given.list) + " (" + given.source +
                       "): expected a list of sinks, each a mapping with a name and the keys of a sink: section");
  if (given.list.size() > max_sinks)
    throw config_error("config error: sinks (" + given.source + "): " + std::to_string(given.list.size()) +
                       " sinks; expected at most " + std::to_string(max_sinks) +
                       " (each has a drain thread per shard and its own workers)");
  for (std::size_t i = 0; i < given.list.size(); ++i) {
    const YAML::Node& element = given.list[i];
    const std::string label = "sinks[" + std::to_string(i) + "]";
    if (!element.IsMap())
      throw config_error("config error: " + label + " = " + quoted(element) + " (" + given.source +
                         "): expected a mapping with a name and the keys of a sink: section");
    int names = 0;
    for (const auto& kv : element) names += kv.first.IsScalar() && kv.first.Scalar() == "name";
    if (names > 1)
      throw config_error("config error: " + label + ".name (" + given.source +
                         ") is given twice; expected one name per sink");
    const YAML::Node name = element["name"];
    if (!name || !name.IsScalar() || !sink_name_ok(name.Scalar()))
      throw config_error("config error: " + label + ".name = " + (name ? quoted(name) : "(missing)") + " (" +
                         given.source + "): expected " + sink_name_rule);
    for (const auto& other : c.sinks)
      if (other.name == name.Scalar())
        throw config_error("config error: " + label + ".name = " + quoted(name) + " (" + given.source +
                           "): another sink has that name; expected each name once");
    YAML::Node keys(YAML::NodeType::Map);
    for (const auto& kv : element)
      if (!(kv.first.IsScalar() && kv.first.Scalar() == "name")) keys[kv.first] = kv.second;
    config scratch = c;
    key_origins origins;
    keys_given seen;
    try {
      apply_yaml_map(scratch, origins, seen, keys, "sink", given.source);
    } catch (const config_error& e) {
      const std::string what = e.what(), head = "config error: ";
      throw config_error(head + label + " (" + name.Scalar() + "): " + what.substr(what.rfind(head, 0) == 0 ? head.size() : 0));
    }
    scratch.sink.name = name.Scalar();
    c.sinks.push_back(scratch.sink);
  }
}

}  // namespace

namespace {

bool is_key_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

/// Whether `key` appears in `message` as a key: whole (not part of a longer
/// name), and outside the quoted values the message echoes. A map key's
/// entries count (sink.http.headers.X-Tenant names sink.http.headers).
bool names_key(const std::string& message, const setting& s) {
  bool quoted = false;
  for (std::size_t i = 0; i < message.size(); ++i) {
    if (quoted && message[i] == '\\') {
      ++i;  // an escaped character of a quoted value (quoted_text)
      continue;
    }
    if (message[i] == '"') quoted = !quoted;
    if (quoted || message.compare(i, s.key.size(), s.key) != 0) continue;
    const std::size_t end = i + s.key.size();
    const bool starts = i == 0 || !is_key_char(message[i - 1]);
    const bool ends = end == message.size() || !is_key_char(message[end]) ||
                      (s.structured && message[end] == '.' && end + 1 < message.size() && message[end + 1] != ' ');
    if (starts && ends) return true;
  }
  return false;
}

/// `e` (a rule across keys refused the values) with where each key it names
/// was set: "(ingest.shards from --set; wab.segment_max_bytes by default)".
config_error with_origins(const config_error& e, const key_origins& origins) {
  const std::string message = e.what();
  if (message.find("sinks[") != std::string::npos) return e;  // a sink's own keys: it says which sink
  std::string said;
  for (const auto& s : settings()) {
    if (!names_key(message, s)) continue;
    const auto o = origins.find(s.key);
    said += std::string(said.empty() ? "" : "; ") + s.key + (o == origins.end() ? " by default" : " from " + o->second);
  }
  return config_error(said.empty() ? message : message + " (" + said + ")");
}

}  // namespace

config load_config(const config_sources& sources) {
  config c = default_config();
  key_origins origins;
  sink_list_given sink_list;
  if (!sources.file.empty()) apply_file(c, origins, sources, sink_list);
  apply_env(c, origins, sources, sink_list);
  apply_overrides(c, origins, sources, sink_list);
  apply_sink_list(c, sink_list);
  try {
    validate_config(c);
  } catch (const config_error& e) {
    throw with_origins(e, origins);
  }
  return c;
}

std::vector<std::string> process_environment() {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) out.emplace_back(*e);
  return out;
}

namespace {

/// Sets `value` at the dotted path `key` under `root`, making the maps along it.
void put_at(YAML::Node root, const std::string& key, const YAML::Node& value) {
  std::vector<YAML::Node> chain{root};
  std::string rest = key;
  for (auto dot = rest.find('.'); dot != std::string::npos; dot = rest.find('.')) {
    chain.push_back(chain.back()[rest.substr(0, dot)]);
    rest = rest.substr(dot + 1);
  }
  chain.back()[rest] = value;
}

}  // namespace

std::string render_config(const config& c) {
  YAML::Node root(YAML::NodeType::Map);
  for (auto& s : settings()) {
    put_at(root, s.key, s.secret ? YAML::Node("(redacted)") : s.show(c));
  }
  for (const auto& sink : c.sinks) {
    const config as_only = with_only_sink(c, sink);
    YAML::Node element(YAML::NodeType::Map);
    element["name"] = sink.name;
    for (auto& s : settings()) {
      if (s.key.rfind("sink.", 0) != 0) continue;
      // Its own type's section, not every type's.
      const std::string rest = s.key.substr(5);
      const auto dot = rest.find('.');
      if (dot != std::string::npos && rest.substr(0, dot) != "retry" && rest.substr(0, dot) != sink.type) continue;
      put_at(element, s.key.substr(5), s.secret ? YAML::Node("(redacted)") : s.show(as_only));
    }
    root[sink_list_key].push_back(element);
  }
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

std::string describe_config() {
  std::string out =
      "| key | default | allowed | environment | meaning |\n"
      "| --- | --- | --- | --- | --- |\n";
  for (auto& s : settings()) {
    std::string allowed = s.allowed;
    for (std::size_t at = allowed.find('|'); at != std::string::npos; at = allowed.find('|', at + 2))
      allowed.replace(at, 1, "\\|");
    out += "| `" + s.key + "` | `" + s.default_yaml + "` | " + allowed + " | `" + env_name(s.key) +
           "` | " + s.help + " |\n";
  }
  out += std::string("| `") + sink_list_key + "` | `[]` | a list of sinks, each a mapping: `name` (" + sink_name_rule +
         ") and any `sink.` key without its `sink.` | `" + env_name(sink_list_key) +
         "` | Several sinks, each delivered to on its own (its own cursor, retries, health and dead letters); an "
         "element's keys go on top of the `sink:` section's. Empty: the `sink:` section is the one sink, named "
         "default. See docs/sinks.md, several sinks. |\n";
  return out;
}

}  // namespace weir
