#pragma once
// Silences the daemon's log while a simulation runs without a trace.
#include <mutex>

#include "observability/log.hpp"

namespace weir::sim {

/// The daemon's log is noise in a sweep; a verbose replay shows it. The log
/// level is process-wide: the first of concurrent runs silences it, the last
/// one restores it.
class log_silencer {
 public:
  explicit log_silencer(bool silence) : active_(silence) {
    if (!active_) return;
    std::lock_guard<std::mutex> guard(mutex_);
    if (users_++ > 0) return;
    for (auto l : {log_level::trace, log_level::debug, log_level::info, log_level::warn, log_level::error})
      if (log::enabled(l)) {
        before_ = l;
        break;
      }
    log::configure(static_cast<log_level>(static_cast<int>(log_level::error) + 1), log_format::text);
  }
  ~log_silencer() {
    if (!active_) return;
    std::lock_guard<std::mutex> guard(mutex_);
    if (--users_ == 0) log::configure(before_, log_format::text);
  }

 private:
  bool active_;
  static inline std::mutex mutex_;
  static inline unsigned users_ = 0;
  static inline log_level before_ = log_level::info;
};

}  // namespace weir::sim
