#pragma once
// The sinks a daemon delivers to. With a `sinks:` list each element is a
// `sink:` section of its own (its keys on top of the `sink:` section's, so
// shared settings such as sink.retry.* are written once); without one, the
// `sink:` section is the one sink, named "default".
//
// A sink's name is part of what it leaves on disk — its confirm cursor in
// every shard and its dead-letter directory — so renaming one starts its
// delivery over from the oldest record still held, and reordering the list
// changes nothing.
#include <string>
#include <vector>

#include "config/config.hpp"

namespace weir {

inline constexpr const char* default_sink_name = "default";

/// Every sink records go to, in the configured order (at least one).
std::vector<sink_config> configured_sinks(const config& c);

/// `c` as the one sink `s` sees it: everything else as configured, `s` as
/// the `sink:` section. (Each sink's code reads its settings from there.)
config with_only_sink(const config& c, const sink_config& s);

/// A sink name: a lowercase letter, then lowercase letters, digits, `_` or
/// `-`, at most 32 in all (it goes into file names and metric labels).
bool sink_name_ok(const std::string& name);
inline constexpr const char* sink_name_rule =
    "a lowercase letter, then lowercase letters, digits, _ or - (at most 32)";

/// Where sink `name` keeps its dead letters, under data_dir: dead_letter for
/// the default sink (as before there were several), dead_letter-<name> else.
std::string dead_letter_dir_name(const std::string& name);

}  // namespace weir
