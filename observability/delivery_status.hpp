#pragma once
// What delivery is doing, shared by the sink runner (which writes it) and
// whoever reports it (logs, admin endpoints). Plain atomics: reading it never
// waits on delivery.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "wire/sink_record.hpp"

namespace weir {

enum class delivery_state : std::uint8_t {
  idle,              // nothing to deliver
  delivering,        // commits in flight
  retrying,          // the sink failed transiently; waiting out the backoff
  dead_letter_full,  // a rejected record cannot be stored: delivery stopped until space frees
};

inline std::string_view name_of(delivery_state s) {
  switch (s) {
    case delivery_state::idle: return "idle";
    case delivery_state::delivering: return "delivering";
    case delivery_state::retrying: return "retrying";
    case delivery_state::dead_letter_full: return "dead_letter_full";
  }
  return "?";
}

struct delivery_status {
  std::atomic<delivery_state> state{delivery_state::idle};
  std::atomic<sink_health> health{sink_health::healthy};
  std::atomic<std::uint64_t> committed_batches{0}, committed_records{0}, dead_lettered{0}, retries{0};
  std::atomic<std::uint64_t> backoff_ms{0};  // the current wait, while retrying
  std::atomic<std::int64_t> last_commit_unix_ns{0};  // wall clock of the last commit that went through; 0: none yet

  void set_error(std::string e) {
    std::lock_guard<std::mutex> guard(mutex_);
    last_error_ = std::move(e);
  }
  std::string last_error() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return last_error_;
  }

 private:
  mutable std::mutex mutex_;
  std::string last_error_;
};

}  // namespace weir
