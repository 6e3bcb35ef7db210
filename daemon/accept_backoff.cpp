#include "daemon/accept_backoff.hpp"

#include <algorithm>

#include "observability/log.hpp"

namespace weir {

std::chrono::milliseconds accept_backoff::failed(const boost::system::error_code& ec, const std::string& listener,
                                                 listener_stats& stats) {
  ++stats.accept_errors;
  delay_ = std::clamp(delay_ * 2, std::chrono::milliseconds(10), std::chrono::milliseconds(1000));
  const auto now = std::chrono::steady_clock::now();
  if (now >= next_log_) {
    log::warn("accept failed; backing off", {{"listener", listener},
                                             {"error", ec.message()},
                                             {"retry_in_ms", std::to_string(delay_.count())},
                                             {"failures_since_last_log", std::to_string(unlogged_ + 1)}});
    unlogged_ = 0;
    next_log_ = now + std::chrono::seconds(10);
  } else {
    ++unlogged_;
  }
  return delay_;
}

}  // namespace weir
