#pragma once
// One log line for a burst of the same event: the first at once, then at
// most one per interval, each saying how many events it stands for. A flood
// of hostile connections is then a line every few seconds, not a line each,
// and an operator still learns that it happened and how often.
#include <chrono>
#include <cstdint>
#include <mutex>

namespace weir {

class log_throttle {
 public:
  explicit log_throttle(std::chrono::nanoseconds every = std::chrono::seconds(10)) : every_ns_(every.count()) {}

  /// Counts one event at `now_ns` (any clock, as long as it is always the
  /// same one). Returns how many events the line for it stands for, this one
  /// included, when it gets a line; 0 when it does not.
  std::uint64_t admit(std::int64_t now_ns);
  /// The same on the steady clock.
  std::uint64_t admit();

 private:
  const std::int64_t every_ns_;
  std::mutex mutex_;
  bool logged_ = false;
  std::int64_t next_ns_ = 0;
  std::uint64_t pending_ = 0;  // events since the last line
};

}  // namespace weir
