#pragma once
// Which CPUs take the interrupts of the disk under a path: the completions
// of the WAB's fdatasync arrive there. Found from sysfs (the block device,
// the disks under a device-mapper or md device, the PCI function that
// raises their interrupts) and /proc/irq (where each is delivered).
// Vectors that carry no completions (virtio's configuration vector, an NVMe
// admin queue) are left out.
#include <string>
#include <string_view>
#include <vector>

namespace weir {

/// A kernel CPU list ("0-3,8,10-11\n") as ascending CPU ids; empty for text
/// that does not parse.
std::vector<int> parse_cpu_list(std::string_view text);

/// "0,1,3": CPU ids, comma-separated, for logs (no ranges).
std::string cpu_list(const std::vector<int>& cpus);

/// The CPUs that take the interrupts of the disk holding `path`, ascending;
/// empty when they cannot be told (a file system on no block device, a
/// device without interrupts of its own, sysfs or /proc not mounted).
/// `sys` and `proc` are where those are mounted (tests point them at a
/// made-up tree).
std::vector<int> disk_interrupt_cpus(const std::string& path, const std::string& sys = "/sys",
                                     const std::string& proc = "/proc");

}  // namespace weir
