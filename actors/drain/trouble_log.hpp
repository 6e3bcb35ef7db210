#pragma once
// The drain's housekeeping (cursor stores, deletions, reads) is retried on
// a timer while it fails: one log line when trouble starts or changes, not
// one per retry, and one when it works again.
#include <cstdint>
#include <string>

namespace weir::drain_parts {

class trouble_log {
 public:
  trouble_log(std::string dir, std::int64_t retry_ms) : dir_(std::move(dir)), retry_ms_(retry_ms) {}

  /// `what` failed with -errno `rc`.
  void report(const std::string& what, int rc);
  /// Everything worked: says so once after trouble.
  void all_well();
  bool in_trouble() const { return in_trouble_; }

 private:
  std::string dir_;
  std::int64_t retry_ms_;
  bool in_trouble_ = false;
  std::string last_;
};

}  // namespace weir::drain_parts
