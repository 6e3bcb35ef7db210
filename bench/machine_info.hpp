#pragma once
// What a result was measured on, recorded in every BENCH line: a number
// without its machine, its disk and its commit cannot be compared with
// anything.
#include <string>

#include <nlohmann/json.hpp>

namespace weir::bench {

/// {git_commit, cpu_model, cores, kernel, wab_filesystem, wab_device,
///  cpus_allowed} for a run whose WAB lives under `wab_dir`.
nlohmann::json describe_machine(const std::string& wab_dir);

/// The CPUs this process may run on, as a list like "0-3,6"; the daemons
/// weir-bench starts and its producers inherit the same set.
std::string cpus_allowed();

}  // namespace weir::bench
