#pragma once
// Retiring a host (SIGUSR1, `weir-ctl drain`): the daemon stops taking
// pushes, delivers every record it holds to every sink, then stops as on
// SIGTERM. What is left, and for which sink, is logged every 10 s; SIGTERM
// or SIGINT meanwhile ends the wait (the rest stays in the WAB for the next
// start, as after any stop).
#include <signal.h>

#include <vector>

#include "observability/metrics.hpp"

namespace weir {

/// Waits, with pushes no longer taken, until every sink has confirmed every
/// record written or found at start. True when that happened; false when
/// SIGTERM or SIGINT (in `signals`, blocked) came first.
bool deliver_everything(const sigset_t& signals, const metrics& stats, const std::vector<metrics::sink_state>& sinks);

}  // namespace weir
