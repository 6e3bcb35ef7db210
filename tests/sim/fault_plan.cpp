#include "sim/fault_plan.hpp"

namespace weir::sim {

std::string_view name_of(fault_kind k) {
  switch (k) {
    case fault_kind::sync_eio: return "fdatasync-eio";
    case fault_kind::write_enospc: return "write-enospc";
    case fault_kind::write_torn: return "write-torn";
    case fault_kind::rename_fail: return "rename";
    case fault_kind::dir_fsync_fail: return "dir-fsync";
    case fault_kind::unlink_fail: return "unlink";
    case fault_kind::create_fail: return "create";
    case fault_kind::cursor_fail: return "cursor-store";
    case fault_kind::disk_full: return "disk-full";
    case fault_kind::count: break;
  }
  return "?";
}

bool fault_plan::strike(fault_kind k) {
  if (!enabled_) return false;
  auto& left = countdown_[index(k)];
  if (left == 0) return false;
  if (--left > 0) return false;
  ++injected_[index(k)];
  return true;
}

void fault_plan::clear() {
  countdown_.fill(0);
  disk_full_ = false;
}

std::uint64_t fault_plan::injected_total() const {
  std::uint64_t n = 0;
  for (auto x : injected_) n += x;
  return n;
}

}  // namespace weir::sim
