#include "runtime/cpu_setup.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

#include "observability/log.hpp"
#include "runtime/disk_interrupts.hpp"
#include "runtime/usable_cores.hpp"

namespace weir {

cpu_layout look_at_cpus(const std::string& wab_dir) {
  return {wab_dir, disk_interrupt_cpus(wab_dir), allowed_cpus(std::numeric_limits<unsigned>::max())};
}

std::unique_ptr<cpu_keep_awake> start_keep_awake(const config& cfg, const cpu_layout& cpus) {
  if (cfg.runtime.keep_awake_us <= 0) return nullptr;
  const auto spinners = spinner_cpus(cpus.allowed, usable_cores(), cpus.disk_irqs);
  auto keep_awake = std::make_unique<cpu_keep_awake>(std::chrono::microseconds(cfg.runtime.keep_awake_us), spinners);
  const bool on_interrupt_cpus = std::any_of(spinners.begin(), spinners.end(), [&](int cpu) {
    return std::find(cpus.disk_irqs.begin(), cpus.disk_irqs.end(), cpu) != cpus.disk_irqs.end();
  });
  if (cpus.disk_irqs.empty())
    log::info("keep-awake: the CPUs that take the WAB disk's interrupts cannot be told (no single block device "
              "with interrupts of its own under it); spinners go on every usable CPU",
              {{"dir", cpus.wab_dir}, {"spinner_cpus", cpu_list(spinners)}});
  else
    log::info(on_interrupt_cpus
                  ? "every usable CPU takes the WAB disk's interrupts; keep-awake spinners go on them all"
                  : "keep-awake spinners leave out the CPUs that take the WAB disk's interrupts",
              {{"disk_interrupt_cpus", cpu_list(cpus.disk_irqs)}, {"spinner_cpus", cpu_list(spinners)}});
  if (keep_awake->stats().spinners == 0)
    log::warn("runtime.keep_awake_us is set but the CPU affinity could not be read; no CPU is kept awake");
  if (const auto quota = cpu_quota_cores())
    log::warn("runtime.keep_awake_us spends this cgroup's CPU quota while producers are active, and the "
              "daemon's own threads may then be throttled; set it to 0 under a CPU quota",
              {{"quota_cores", std::to_string(*quota)}});
  return keep_awake;
}

std::unique_ptr<cpu_placement> start_cpu_placement(const config& cfg, const cpu_layout& cpus, bool keep_awake,
                                                   client_activity& activity, const io_spin_stats* spin,
                                                   std::string& ready_field) {
  const auto& allowed = cpus.allowed;
  const auto& disk_irqs = cpus.disk_irqs;
  ready_field = "spread";
  if (cfg.runtime.cpu_placement != cpu_placement_mode::adaptive) return nullptr;
  if (keep_awake) {
    // Not with the spinners: they keep the other CPUs awake, the producer
    // is then woken there, and the gathered daemon's own CPU halts between
    // records (one Durable producer 1.01-1.02 of append+fdatasync gathered
    // with a spinner, against about 1.17 spread with it).
    ready_field = "spread (runtime.keep_awake_us is on)";
    log::info("runtime.cpu_placement: adaptive does not gather threads while runtime.keep_awake_us is on; they stay spread");
    return nullptr;
  }
  auto placement = std::make_unique<cpu_placement>(gather_cpu(allowed, disk_irqs), allowed, activity, spin);
  if (const char* why = placement->off_reason()) {
    ready_field = std::string("spread (") + why + ")";
    log::info("runtime.cpu_placement: threads are not moved", {{"why", why}, {"usable_cpus", cpu_list(allowed)}});
    return nullptr;
  }
  ready_field = "adaptive, gathering on cpu " + std::to_string(placement->stats().gather_cpu);
  log::info("runtime.cpu_placement: threads gather on one CPU while the daemon fits on one",
            {{"gather_cpu", std::to_string(placement->stats().gather_cpu)},
             {"disk_interrupt_cpus", disk_irqs.empty() ? "unknown" : cpu_list(disk_irqs)},
             {"usable_cpus", cpu_list(allowed)}});
  return placement;
}

}  // namespace weir
