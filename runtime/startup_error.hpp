#pragma once
#include <mutex>
#include <stdexcept>
#include <string>

namespace weir {

/// A reason the daemon cannot start; its message is the one line printed
/// before exiting with status 2. The last one is kept, for a start whose
/// teardown hangs before that line could be printed (daemon.cpp).
struct startup_error : std::runtime_error {
  explicit startup_error(const std::string& what) : std::runtime_error(what) { last_reason(&what); }

  /// The message of the last startup_error made (with `set`, makes it that).
  static std::string last_reason(const std::string* set = nullptr) {
    static std::mutex mutex;
    static std::string reason;
    std::lock_guard<std::mutex> guard(mutex);
    if (set) reason = *set;
    return reason;
  }
};

}  // namespace weir
