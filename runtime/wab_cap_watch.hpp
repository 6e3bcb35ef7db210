#pragma once
// wab_cap_watch: says in the log when the WAB reaches limits.wab_max_bytes
// (pushes are refused from then on) and which sink holds it — the one
// furthest behind, with its health and last error — again every minute it
// lasts, and when pushes are taken again, with how many were refused. The
// refusals themselves are counted, not logged one by one. Looks once a
// second, on a thread of its own, whether or not the admin server runs.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "observability/metrics.hpp"
#include "wab/wab_usage.hpp"

namespace weir {

class wab_cap_watch {
 public:
  wab_cap_watch(std::shared_ptr<wab::wab_usage> usage, const metrics& stats, std::vector<metrics::sink_state> sinks,
                std::chrono::milliseconds every = std::chrono::seconds(1));
  ~wab_cap_watch();
  wab_cap_watch(const wab_cap_watch&) = delete;
  wab_cap_watch& operator=(const wab_cap_watch&) = delete;

  /// One look (the thread's; public for tests).
  void look();

 private:
  std::shared_ptr<wab::wab_usage> usage_;
  const metrics& stats_;
  std::vector<metrics::sink_state> sinks_;
  bool over_ = false;
  std::chrono::steady_clock::time_point since_, last_said_;
  std::uint64_t refused_before_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace weir
