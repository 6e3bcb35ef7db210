#pragma once
// Where the daemon's threads run (docs/operations.md, "CPUs"): which CPUs it
// may use and which take the WAB disk's interrupts, the keep-awake spinners
// (runtime.keep_awake_us) and the placement controller
// (runtime.cpu_placement), each logged once at start with why it is on or
// off.
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "runtime/client_activity.hpp"
#include "runtime/cpu_keep_awake.hpp"
#include "runtime/cpu_placement.hpp"
#include "runtime/io_thread_loop.hpp"

namespace weir {

struct cpu_layout {
  std::string wab_dir;          // the WAB's own directory (it may be a mount of its own)
  std::vector<int> disk_irqs;   // the CPUs that take its disk's interrupts; empty when unknown
  std::vector<int> allowed;     // the CPUs the daemon may run on
};

cpu_layout look_at_cpus(const std::string& wab_dir);

/// The spinners with runtime.keep_awake_us, else null.
std::unique_ptr<cpu_keep_awake> start_keep_awake(const config& cfg, const cpu_layout& cpus);

/// The placement controller with runtime.cpu_placement: adaptive, or null
/// when the threads stay where the kernel puts them; `ready_field` says
/// which, and why, for the ready line.
std::unique_ptr<cpu_placement> start_cpu_placement(const config& cfg, const cpu_layout& cpus, bool keep_awake,
                                                   client_activity& activity, const io_spin_stats* spin,
                                                   std::string& ready_field);

}  // namespace weir
