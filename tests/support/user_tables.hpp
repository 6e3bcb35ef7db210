#pragma once
// What the tests of a table of the user's share across databases: the
// `events` mapping, its JSON payloads, and a sink factory made from a
// server's daemon arguments as the daemon would make it.
#include <memory>
#include <string>
#include <vector>

#include "sinks/sink.hpp"

namespace weir::test {

/// sink.<type>.table=events with columns user_id: /user, kind: /event/kind, at: /ts.
std::vector<std::string> events_mapping_keys(const std::string& type);

/// {"user": user, "event": {"kind": kind}, "ts": "at"} (`kind` is JSON as written).
std::string event(int user, const std::string& kind, const std::string& at);

/// The factory of a daemon started with `daemon_args` (--set key=value
/// pairs) and `more` key=value overrides, with a 5 s sink timeout.
std::shared_ptr<sink_factory> sink_factory_of(const std::vector<std::string>& daemon_args,
                                              const std::vector<std::string>& more);

}  // namespace weir::test
