#include "files/time_limit.hpp"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace weir {

namespace {

/// One read in progress: the reader thread owns a share of it, so a waiter
/// that gives up leaves it nothing to write into but this.
struct pending_read {
  bool done = false;
  bool given_up = false;
  std::string why, data;
};

// One lock and one condition for every read: they are a few per reload.
std::mutex reads_mutex;
std::condition_variable reads_changed;
std::uint64_t give_up_generation = 0;
// Changed under reads_mutex; atomic so that the exit-time hook below reads it
// without a lock that may be gone by then.
std::atomic<int> stuck{0};

std::string seconds_text(std::chrono::milliseconds limit) {
  const auto ms = limit.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

}  // namespace

std::string read_within(const std::function<std::string(std::string&)>& read, std::string& out,
                        std::chrono::milliseconds limit) {
  auto state = std::make_shared<pending_read>();
  std::unique_lock<std::mutex> lock(reads_mutex);
  if (stuck >= max_stuck_file_reads)
    return std::to_string(stuck.load()) + " earlier file reads have not returned (a file system that does not answer?); not trying another";
  const std::uint64_t generation = give_up_generation;
  try {
    std::thread([state, read] {
      std::string data;
      std::string why;
      try {
        why = read(data);
      } catch (const std::exception& e) {
        why = e.what();
      }
      std::lock_guard<std::mutex> guard(reads_mutex);
      state->why = std::move(why);
      state->data = std::move(data);
      state->done = true;
      if (state->given_up) --stuck;
      reads_changed.notify_all();
    }).detach();
  } catch (const std::system_error& e) {
    return std::string("cannot start a thread to read it: ") + e.what();
  }
  const bool finished = reads_changed.wait_for(lock, limit, [&] { return state->done || give_up_generation != generation; });
  if (finished && state->done) {
    out = std::move(state->data);
    return std::move(state->why);
  }
  state->given_up = true;
  ++stuck;
  if (give_up_generation != generation) return "not read: given up at shutdown";
  return "did not answer within " + seconds_text(limit) + " (a file system that does not respond?)";
}

void give_up_file_reads_in_progress() {
  std::lock_guard<std::mutex> guard(reads_mutex);
  ++give_up_generation;
  reads_changed.notify_all();
}

int stuck_file_reads() { return stuck.load(); }

}  // namespace weir

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WEIR_ADDRESS_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(WEIR_ADDRESS_SANITIZER)
// LeakSanitizer's check at exit stops every thread with ptrace first. A
// thread blocked in a file system that never answers cannot be stopped, so
// the check would hang the exit for ever: with such a thread alive it is
// skipped (LeakSanitizer calls this hook before stopping anything); every
// other exit is checked as usual.
extern "C" int __lsan_is_turned_off() { return weir::stuck_file_reads() > 0 ? 1 : 0; }
#endif
