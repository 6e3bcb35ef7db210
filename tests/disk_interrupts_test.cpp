// Which CPUs take the WAB disk's interrupts (read from sysfs and /proc/irq,
// here from made-up trees shaped like the kernel's), and where the
// keep-awake spinners go once that is known.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <fstream>
#include <algorithm>

#include <catch2/catch.hpp>

#include "runtime/cpu_keep_awake.hpp"
#include "runtime/disk_interrupts.hpp"
#include "support/test_paths.hpp"

using namespace weir;
using namespace weir::test;
namespace fs = std::filesystem;

namespace {

using cpus = std::vector<int>;

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

void link(const fs::path& at, const fs::path& to) {
  fs::create_directories(at.parent_path());
  fs::create_directory_symlink(to, at);
}

/// A made-up /sys and /proc, and the "M:m" sysfs names the device of the
/// directory the data lives in (whatever device that really is).
struct machine {
  temp_dir root;
  fs::path sys = root / "sys";
  fs::path proc = root / "proc";
  fs::path data = root / "data";

  machine() { fs::create_directories(data); }

  std::string data_device() const {
    struct stat st {};
    REQUIRE(::stat(data.c_str(), &st) == 0);
    return std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  }

  /// A PCI function raising MSI vectors `irqs`, each delivered to `where`
  /// (and, like a real one, with the legacy `irq` file beside them).
  fs::path pci_function(const std::string& name, const std::vector<int>& irqs, const std::string& where) {
    const fs::path dir = sys / "devices/pci0000:00" / name;
    write(dir / "irq", "16\n");
    for (int irq : irqs) vector(dir, irq, where, "");
    return dir;
  }

  /// One MSI vector of `function`, delivered to `where`, its handler named
  /// `action` ("" for none).
  void vector(const fs::path& function, int irq, const std::string& where, const std::string& action) {
    write(function / "msi_irqs" / std::to_string(irq), "msi\n");
    write(proc / "irq" / std::to_string(irq) / "effective_affinity_list", where + "\n");
    write(proc / "irq" / std::to_string(irq) / "smp_affinity_list", "0-3\n");
    if (!action.empty()) write(sys / "kernel/irq" / std::to_string(irq) / "actions", action + "\n");
  }

  /// A virtio disk under `function`: its block node, whose `device` is the
  /// virtio device (no interrupts of its own) below the PCI function.
  fs::path virtio_disk(const fs::path& function, const std::string& virtio, const std::string& disk) {
    return block_device(function / virtio / "block" / disk, function / virtio);
  }

  /// A block device's sysfs node at `block`, whose `device` is `device`.
  static fs::path block_device(const fs::path& block, const fs::path& device) {
    fs::create_directories(block);
    link(block / "device", device);
    return block;
  }

  void data_on(const fs::path& block) { link(sys / "dev/block" / data_device(), block); }

  /// What the search finds for the data directory in this tree.
  cpus found() const { return disk_interrupt_cpus(data.string(), sys.string(), proc.string()); }
};

}  // namespace

TEST_CASE("disk interrupts: kernel CPU lists", "[keep_awake]") {
  CHECK(parse_cpu_list("0-3,8,10-11\n") == cpus{0, 1, 2, 3, 8, 10, 11});
  CHECK(parse_cpu_list("1") == cpus{1});
  CHECK(parse_cpu_list("3,1,1-2") == cpus{1, 2, 3});
  CHECK(parse_cpu_list("").empty());
  CHECK(parse_cpu_list("3-1").empty());
  CHECK(parse_cpu_list("0-x").empty());
  CHECK(parse_cpu_list("-1").empty());
}

TEST_CASE("disk interrupts: a virtio disk's vectors and where they are delivered", "[keep_awake]") {
  machine m;
  const auto function = m.pci_function("0000:00:02.0", {35, 36}, "1");
  m.data_on(m.virtio_disk(function, "virtio1", "vda"));
  CHECK(m.found() == cpus{1});
}

TEST_CASE("disk interrupts: vectors that carry no completions are left out", "[keep_awake]") {
  machine m;
  // virtio: the configuration-change vector sits on another CPU than the queue's.
  const auto function = m.pci_function("0000:00:02.0", {}, "");
  m.vector(function, 35, "0", "virtio1-config");
  m.vector(function, 36, "1", "virtio1-req.0");
  m.data_on(m.virtio_disk(function, "virtio1", "vda"));
  CHECK(m.found() == cpus{1});

  // NVMe: the admin queue's vector, and two I/O queues.
  machine n;
  const auto nvme = n.pci_function("0000:00:04.0", {}, "");
  n.vector(nvme, 50, "0", "nvme0q0");
  n.vector(nvme, 51, "2", "nvme0q1");
  n.vector(nvme, 52, "3", "nvme0q2");
  n.data_on(machine::block_device(nvme / "nvme/nvme0/nvme0n1", nvme / "nvme/nvme0"));
  CHECK(n.found() == cpus{2, 3});
}

TEST_CASE("disk interrupts: a partition is its disk's", "[keep_awake]") {
  machine m;
  const auto disk = m.virtio_disk(m.pci_function("0000:00:02.0", {35, 36}, "0"), "virtio1", "vda");
  write(disk / "vda1" / "partition", "1\n");
  m.data_on(disk / "vda1");
  CHECK(m.found() == cpus{0});
}

TEST_CASE("disk interrupts: a device-mapper device's are those of the disks under it", "[keep_awake]") {
  machine m;
  const auto vdb = m.virtio_disk(m.pci_function("0000:00:03.0", {40}, "2"), "virtio2", "vdb");
  const auto vdc = m.virtio_disk(m.pci_function("0000:00:04.0", {41, 42}, "0,3"), "virtio3", "vdc");
  const fs::path dm = m.sys / "devices/virtual/block/dm-0";
  link(dm / "slaves" / "vdb", vdb);
  link(dm / "slaves" / "vdc", vdc);
  m.data_on(dm);
  CHECK(m.found() == cpus{0, 2, 3});

  // LVM over a partition: the partition's disk.
  machine p;
  const auto vdd = p.virtio_disk(p.pci_function("0000:00:05.0", {44}, "1"), "virtio4", "vdd");
  write(vdd / "vdd2" / "partition", "2\n");
  const fs::path lv = p.sys / "devices/virtual/block/dm-1";
  link(lv / "slaves" / "vdd2", vdd / "vdd2");
  p.data_on(lv);
  CHECK(p.found() == cpus{1});
}

TEST_CASE("disk interrupts: a legacy interrupt line and no effective affinity", "[keep_awake]") {
  machine m;
  const fs::path function = m.sys / "devices/pci0000:00/0000:00:1f.2";
  write(function / "irq", "11\n");
  write(m.proc / "irq/11/smp_affinity_list", "2\n");
  const fs::path scsi = function / "ata1/host0/target0:0:0/0:0:0:0";
  m.data_on(machine::block_device(scsi / "block/sda", scsi));
  CHECK(m.found() == cpus{2});
}

TEST_CASE("disk interrupts: a function without an interrupt does not lend its bridge's", "[keep_awake]") {
  machine m;
  const fs::path bridge = m.pci_function("0000:00:1c.0", {60}, "0");  // a PCIe port's own vectors
  const fs::path function = bridge / "0000:01:00.0";
  write(function / "irq", "0\n");
  m.data_on(m.virtio_disk(function, "virtio5", "vde"));
  CHECK(m.found().empty());
}

TEST_CASE("disk interrupts: a device outside the devices tree ends the search", "[keep_awake]") {
  machine m;
  // No <sys>/devices at all, and a device link that leads elsewhere: the
  // search stops (it once climbed to / and round forever).
  const fs::path elsewhere = m.root / "elsewhere";
  write(elsewhere / "0000:00:02.0/msi_irqs/35", "msi\n");
  write(m.proc / "irq/35/effective_affinity_list", "1\n");
  m.data_on(machine::block_device(elsewhere / "0000:00:02.0/virtio1/block/vda", elsewhere / "0000:00:02.0/virtio1"));
  CHECK(m.found().empty());
  fs::create_directories(m.sys / "devices");
  CHECK(m.found().empty());
}

TEST_CASE("disk interrupts: none known without a block device or its interrupts", "[keep_awake]") {
  machine m;
  // No sysfs entry for the data's device (tmpfs, overlay, NFS).
  CHECK(m.found().empty());
  // A virtual block device (loop, zram): no `device` link.
  const fs::path loop = m.sys / "devices/virtual/block/loop0";
  fs::create_directories(loop);
  m.data_on(loop);
  CHECK(m.found().empty());
  CHECK(disk_interrupt_cpus((m.root / "missing").string(), m.sys.string(), m.proc.string()).empty());
}

TEST_CASE("disk interrupts: this machine's answer names CPUs that exist", "[keep_awake]") {
  temp_dir dir;
  std::string possible;
  std::getline(std::ifstream("/sys/devices/system/cpu/possible"), possible);
  const auto cpus_here = parse_cpu_list(possible);
  for (int cpu : disk_interrupt_cpus(dir.path().string()))
    CHECK(std::find(cpus_here.begin(), cpus_here.end(), cpu) != cpus_here.end());
}

TEST_CASE("keep-awake: spinners go on the CPUs that do not take the WAB disk's interrupts", "[keep_awake]") {
  CHECK(spinner_cpus({0, 1}, 2, {1}) == cpus{0});
  CHECK(spinner_cpus({0, 1}, 2, {}) == cpus{0, 1});
  CHECK(spinner_cpus({0, 1, 2, 3}, 2, {0}) == cpus{1, 2});  // a quota of 2 cores: 2 spinners at most
  CHECK(spinner_cpus({4, 5}, 2, {0, 1}) == cpus{4, 5});      // interrupts on CPUs the daemon may not use
  // Every usable CPU takes them: spinning there still beats halting.
  CHECK(spinner_cpus({0, 1}, 2, {0, 1}) == cpus{0, 1});
  CHECK(spinner_cpus({0, 1, 2}, 1, {0, 1, 2}) == cpus{0});
  CHECK(spinner_cpus({}, 2, {0}).empty());
}
