#pragma once
// What a listener does after a failed accept. EMFILE and friends do not
// clear by trying again at once: the pending connection stays queued and
// accept fails again, a busy loop. So it waits, longer each time up to a
// second, and says so once in a while rather than every time.
#include <chrono>
#include <cstdint>
#include <string>

#include <boost/system/error_code.hpp>

#include "observability/listener_stats.hpp"

namespace weir {

class accept_backoff {
 public:
  /// Counts and (at most every 10 s) logs the failure `ec` of `listener`;
  /// returns how long to wait before accepting again.
  std::chrono::milliseconds failed(const boost::system::error_code& ec, const std::string& listener,
                                   listener_stats& stats);
  /// An accept worked: the next failure waits the least again.
  void succeeded() { delay_ = std::chrono::milliseconds(0); }

 private:
  std::chrono::milliseconds delay_{0};
  std::chrono::steady_clock::time_point next_log_{};
  std::uint64_t unlogged_ = 0;
};

}  // namespace weir
