#pragma once
// Which file-system calls fail, as the seeded plan armed them. A fault is one
// call's failure ("the 3rd fdatasync from now returns EIO"), not a state —
// except a full disk, which lasts until the plan clears it. The sim file
// system asks strike() once per call of a kind; only a call that really
// failed is counted.
#include <array>
#include <cstdint>
#include <string_view>

namespace weir::sim {

enum class fault_kind : std::uint8_t {
  sync_eio,        // an fdatasync/fsync fails with EIO; the pages it should have written are lost
  write_enospc,    // a write lands a prefix and returns short; the retry of the rest gets ENOSPC
  write_torn,      // a write lands a prefix, then fails with EIO
  rename_fail,     // rename fails with EIO, nothing moves
  dir_fsync_fail,  // fsync of a directory fails: its entries are not made durable
  unlink_fail,     // unlink fails with EIO, the file stays
  create_fail,     // creating a file fails with ENOSPC
  cursor_fail,     // a write or sync of the confirm cursor file fails
  disk_full,       // while on: no free space, appends and creates fail with ENOSPC
  count
};

inline constexpr std::size_t fault_kinds = static_cast<std::size_t>(fault_kind::count);

std::string_view name_of(fault_kind k);

class fault_plan {
 public:
  /// The `nth` call of kind `k` from now fails (1 = the next one).
  void arm(fault_kind k, unsigned nth) { countdown_[index(k)] = nth; }
  /// Whether this call of kind `k` fails; counts the injection when it does.
  bool strike(fault_kind k);
  /// Counts a call that failed because the disk is full.
  void note_disk_full() { ++injected_[index(fault_kind::disk_full)]; }

  void set_disk_full(bool on) { disk_full_ = on; }
  bool disk_full() const { return enabled_ && disk_full_; }

  /// Faults are off while the daemon recovers and during the final drain.
  void enable(bool on) { enabled_ = on; }
  bool enabled() const { return enabled_; }
  /// Disarms everything and empties the disk.
  void clear();

  std::uint64_t injected(fault_kind k) const { return injected_[index(k)]; }
  std::uint64_t injected_total() const;

 private:
  static std::size_t index(fault_kind k) { return static_cast<std::size_t>(k); }

  std::array<unsigned, fault_kinds> countdown_{};
  std::array<std::uint64_t, fault_kinds> injected_{};
  bool disk_full_ = false;
  bool enabled_ = true;
};

}  // namespace weir::sim
