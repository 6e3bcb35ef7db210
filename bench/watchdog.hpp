#pragma once
// A deadline for a whole weir-bench run. A run that outlives it says which
// step it was in, shows the end of each running daemon's log, kills those
// daemons and exits 1: a hung run reports why instead of being killed
// silently by whatever waits on it (CI's test timeout, a cron job).
#include <sys/types.h>

#include <string>

namespace weir::bench {

/// Starts the deadline clock (once per process; seconds <= 0: none).
void arm_deadline(double seconds);
/// What the run is doing now, for the deadline's report.
void note_step(const std::string& step);
/// A daemon weir-bench started, until it has been reaped.
void track_daemon(pid_t pid, const std::string& log_path);
void untrack_daemon(pid_t pid);

}  // namespace weir::bench
