#pragma once
// backpressure_watch: says in the log when the daemon starts holding
// producers back and when it stops, one line per change of state, with the
// figures an operator needs — never a line per refused push:
//   - the WAB at limits.wab_max_bytes (pushes refused): which sink holds it
//     (the one furthest behind, with its health and last error), again
//     every minute it lasts, and how many were refused once it is over;
//   - the frame memory (limits.frame_memory_bytes) spent: connections with
//     large frames wait for it; how many waits once it is free again.
// (A shard that cannot make a segment says so itself, and when it is back.)
// Looks once a second, on a thread of its own, admin server or not.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "observability/metrics.hpp"
#include "wab/wab_usage.hpp"

namespace weir {

class backpressure_watch {
 public:
  /// `frames` may be null.
  backpressure_watch(std::shared_ptr<wab::wab_usage> usage, const shared_memory_gauge* frames, const metrics& stats,
                     std::vector<metrics::sink_state> sinks, std::chrono::milliseconds every = std::chrono::seconds(1));
  ~backpressure_watch();
  backpressure_watch(const backpressure_watch&) = delete;
  backpressure_watch& operator=(const backpressure_watch&) = delete;

  /// One look (the thread's; public for tests).
  void look();

 private:
  void look_at_wab(std::chrono::steady_clock::time_point now);
  void look_at_frames(std::chrono::steady_clock::time_point now);

  std::shared_ptr<wab::wab_usage> usage_;
  const shared_memory_gauge* frames_;
  const metrics& stats_;
  std::vector<metrics::sink_state> sinks_;
  struct episode {
    bool on = false;
    std::chrono::steady_clock::time_point since, last_said;  // frames: last_said is the last wait seen
    std::uint64_t count_before = 0;  // refusals or waits when it began
  };
  episode wab_, frames_spent_;
  std::uint64_t frame_waits_seen_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace weir
