#pragma once
// What the daemon refuses about a configuration before it touches anything:
// run by the daemon at start and by `weir-server --check-config`, so that a
// check that passes means the daemon will take the configuration.
#include "config/config.hpp"

namespace weir {

/// Throws startup_error with a one-line reason: a listener or cluster this
/// version does not serve, a sink that cannot be set up (its URL, its secret
/// file...). Reads secret files; writes nothing.
void check_startup_config(const config& cfg);

}  // namespace weir
