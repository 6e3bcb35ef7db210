#pragma once
// How many cores the daemon may really use: its CPU affinity, capped by the
// CPU quota of its cgroup (a container's CPU limit), which affinity does not
// show.
#include <optional>
#include <string_view>
#include <vector>

namespace weir {

/// The cores a cgroup v2 `cpu.max` line allows, rounded up ("200000 100000"
/// is 2, "150000 100000" is 2); nullopt for no limit ("max 100000") or a
/// line that does not parse.
std::optional<unsigned> cores_of_cpu_max(std::string_view line);

/// The affinity's CPU count, capped by the tightest `cpu.max` from the
/// daemon's cgroup up to the root; at least 1.
unsigned usable_cores();

/// The CPUs the process may run on (its affinity), the lowest `count` of them.
std::vector<int> allowed_cpus(unsigned count);

/// The tightest `cpu.max` quota from the daemon's cgroup up to the root, in
/// cores rounded up; nullopt when no cgroup v2 quota applies.
std::optional<unsigned> cpu_quota_cores();

}  // namespace weir
