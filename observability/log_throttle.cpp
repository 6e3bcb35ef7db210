#include "observability/log_throttle.hpp"

#include <utility>

namespace weir {

std::uint64_t log_throttle::admit(std::int64_t now_ns) {
  std::lock_guard<std::mutex> guard(mutex_);
  ++pending_;
  if (logged_ && now_ns < next_ns_) return 0;
  logged_ = true;
  next_ns_ = now_ns + every_ns_;
  return std::exchange(pending_, 0);
}

std::uint64_t log_throttle::admit() {
  return admit(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
                   .count());
}

}  // namespace weir
