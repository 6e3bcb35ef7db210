#include "runtime/disk_interrupts.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "runtime/whole_number.hpp"

namespace weir {

namespace fs = std::filesystem;

namespace {

std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

/// The entries of a directory, none when it cannot be read (no exception:
/// this runs at the daemon's start, where a throw would end it).
std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path());
  return out;
}

/// Where an interrupt is delivered: the effective affinity (the CPU the
/// kernel picked), else the allowed one (older kernels).
std::vector<int> cpus_of_irq(const fs::path& proc, int irq) {
  const fs::path dir = proc / "irq" / std::to_string(irq);
  auto cpus = parse_cpu_list(first_line(dir / "effective_affinity_list"));
  if (cpus.empty()) cpus = parse_cpu_list(first_line(dir / "smp_affinity_list"));
  return cpus;
}

/// Whether a vector carries no I/O completions, by the name its handler
/// registered (`/sys/kernel/irq/N/actions`): virtio's configuration-change
/// vector, an NVMe controller's admin queue. Either may sit on a CPU that
/// no sync ever completes on. Unnamed: counted.
bool not_for_completions(const fs::path& sys, int irq) {
  const std::string name = first_line(sys / "kernel/irq" / std::to_string(irq) / "actions");
  const auto ends_with = [&](std::string_view tail) {
    return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends_with("-config") || (name.rfind("nvme", 0) == 0 && ends_with("q0"));
}

/// Whether `dir` is `root` or below it, by whole path components.
bool within(const fs::path& dir, const fs::path& root) {
  auto d = dir.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++d)
    if (d == dir.end() || *d != *r) return false;
  return true;
}

/// The interrupts of the device at `dir` or of its nearest ancestor that
/// has any: a disk's own sysfs node (virtio, NVMe namespace, SCSI target)
/// has none; the PCI function above it lists its MSI vectors, or has one
/// legacy line (its `irq` file; 0: none, and the search ends there rather
/// than take a bridge's vectors for the disk's).
std::vector<int> irqs_above(const fs::path& devices_root, fs::path dir) {
  for (; within(dir, devices_root) && dir != devices_root && dir != dir.parent_path(); dir = dir.parent_path()) {
    std::vector<int> irqs;
    for (const auto& e : entries(dir / "msi_irqs"))
      if (auto n = whole_number<int>(e.filename().string())) irqs.push_back(*n);
    if (!irqs.empty()) return irqs;
    std::error_code ec;
    if (fs::exists(dir / "irq", ec)) {
      const auto legacy = whole_number<int>(first_line(dir / "irq"));
      if (legacy && *legacy > 0) return {*legacy};
      return {};
    }
  }
  return {};
}

/// The interrupts of the block device at `block` (its sysfs node): a
/// partition's are its disk's, and a device-mapper or md device's are those
/// of the disks it is made of.
void collect_irqs(const fs::path& devices_root, fs::path block, int depth, std::set<int>& out) {
  std::error_code ec;
  if (depth > 8) return;  // a loop in a made-up tree; real stacks are a few deep
  if (fs::exists(block / "partition", ec)) block = block.parent_path();
  bool stacked = false;
  for (const auto& slave : entries(block / "slaves")) {
    const auto under = fs::canonical(slave, ec);
    if (ec) continue;
    stacked = true;
    collect_irqs(devices_root, under, depth + 1, out);
  }
  if (stacked) return;
  const auto device = fs::canonical(block / "device", ec);
  if (ec) return;  // a virtual device (loop, zram, ram): no interrupts of its own
  for (int irq : irqs_above(devices_root, device)) out.insert(irq);
}

}  // namespace

std::string cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (int cpu : cpus) {
    if (!out.empty()) out += ',';
    out += std::to_string(cpu);
  }
  return out;
}

std::vector<int> parse_cpu_list(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::vector<int> cpus;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const auto item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const auto dash = item.find('-');
    const auto first = whole_number<int>(item.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : whole_number<int>(item.substr(dash + 1));
    if (!first || !last || *last < *first || *last - *first > 4096) return {};
    for (int cpu = *first; cpu <= *last; ++cpu) cpus.push_back(cpu);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::vector<int> disk_interrupt_cpus(const std::string& path, const std::string& sys, const std::string& proc) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  std::error_code ec;
  const fs::path block = fs::canonical(fs::path(sys) / "dev" / "block" /
                                           (std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev))),
                                       ec);
  if (ec) return {};  // no block device under it (tmpfs, overlay, btrfs, NFS), or no sysfs
  const fs::path devices_root = fs::canonical(fs::path(sys) / "devices", ec);
  if (ec || devices_root.empty()) return {};
  std::set<int> irqs;
  collect_irqs(devices_root, block, 0, irqs);
  std::set<int> cpus;
  for (int irq : irqs)
    if (!not_for_completions(sys, irq))
      for (int cpu : cpus_of_irq(proc, irq)) cpus.insert(cpu);
  return {cpus.begin(), cpus.end()};
}

}  // namespace weir
