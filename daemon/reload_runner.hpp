#pragma once
// SIGHUP asks for a reload; the reload runs here, on a thread of its own,
// never on the thread that waits for signals: SIGTERM is heard and acted on
// at once, whatever a reload is doing. A SIGHUP during a reload asks for one
// more after it (several make one). Every file a reload reads is read
// within a time limit (files/time_limit.hpp), and stop() gives up on those
// reads, so stopping never waits for a file.
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace weir {

class reload_runner {
 public:
  explicit reload_runner(std::function<void()> reload);
  ~reload_runner();
  reload_runner(const reload_runner&) = delete;
  reload_runner& operator=(const reload_runner&) = delete;

  /// Asks for a reload: now, or after the one running. False when it does
  /// not start now: one is running (this one follows it), or the runner
  /// has stopped (nothing runs any more).
  bool request();
  /// No reload starts from now on; a reload reading a file gives up on it
  /// (files/time_limit.hpp) and the one running is waited for. Then
  /// everything the reload touches may go.
  void stop();
  /// Reloads finished so far.
  int finished() const;

 private:
  void run();

  std::function<void()> reload_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool asked_ = false, running_ = false, stopping_ = false;
  int finished_ = 0;
  std::thread thread_;
};

}  // namespace weir
