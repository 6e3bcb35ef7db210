#include "transport/accept_backoff.hpp"

#include <algorithm>

#include "observability/log.hpp"

namespace weir {

std::chrono::milliseconds accept_backoff::failed(const boost::system::error_code& ec, const std::string& listener,
                                                 std::atomic<std::uint64_t>& errors) {
  ++errors;
  delay_ = std::clamp(delay_ * 2, std::chrono::milliseconds(10), std::chrono::milliseconds(1000));
  if (const auto failures = lines_.admit())
    log::warn("accept failed; backing off", {{"listener", listener},
                                             {"error", ec.message()},
                                             {"retry_in_ms", std::to_string(delay_.count())},
                                             {"failures_since_last_log", std::to_string(failures)}});
  return delay_;
}

}  // namespace weir
