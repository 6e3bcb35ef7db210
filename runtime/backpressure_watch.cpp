#include "runtime/backpressure_watch.hpp"

#include "observability/log.hpp"
#include "observability/status_report.hpp"

namespace weir {

namespace {

constexpr auto remind_every = std::chrono::minutes(1);

std::string seconds_since(std::chrono::steady_clock::time_point since, std::chrono::steady_clock::time_point now) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now - since).count());
}

}  // namespace

backpressure_watch::backpressure_watch(std::shared_ptr<wab::wab_usage> usage, const shared_memory_gauge* frames,
                                       const metrics& stats, std::vector<metrics::sink_state> sinks,
                                       std::chrono::milliseconds every)
    : usage_(std::move(usage)), frames_(frames), stats_(stats), sinks_(std::move(sinks)) {
  if (frames_) frame_waits_seen_ = frames_->waits();
  thread_ = std::thread([this, every] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, every, [this] { return stopping_; })) {
      lock.unlock();
      look();
      lock.lock();
    }
  });
}

backpressure_watch::~backpressure_watch() {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void backpressure_watch::look() {
  const auto now = std::chrono::steady_clock::now();
  look_at_wab(now);
  if (frames_) look_at_frames(now);
}

void backpressure_watch::look_at_wab(std::chrono::steady_clock::time_point now) {
  const bool over = usage_->over_cap();
  // Refusals are counted from the last look that found the WAB under its
  // cap: those of the second it went over are part of the episode.
  if (!over && !wab_.on) wab_.count_before = usage_->rejections();
  if (over && (!wab_.on || now - wab_.last_said >= remind_every)) {
    if (!wab_.on) wab_ = {true, now, now, wab_.count_before};
    log::warn(now == wab_.since ? "the WAB reached limits.wab_max_bytes; pushes are refused until the sinks confirm records"
                                : "the WAB is still at limits.wab_max_bytes; pushes are refused",
              {{"wab_bytes", std::to_string(usage_->bytes())},
               {"max_bytes", std::to_string(usage_->cap())},
               {"held_for", sink_holding_wab(stats_, sinks_)},
               {"refused_records", std::to_string(usage_->rejections() - wab_.count_before)}});
    wab_.last_said = now;
  } else if (!over && wab_.on) {
    log::info("the WAB is back under limits.wab_max_bytes; pushes are taken again",
              {{"wab_bytes", std::to_string(usage_->bytes())},
               {"refused_records", std::to_string(usage_->rejections() - wab_.count_before)},
               {"lasted_s", seconds_since(wab_.since, now)}});
    wab_.on = false;
  }
}

void backpressure_watch::look_at_frames(std::chrono::steady_clock::time_point now) {
  // Spent while connections began to wait since the last look; free again
  // only after 5 s without a new wait, so that waits now and then make two
  // lines, not two a second.
  const std::uint64_t waits = frames_->waits(), before = frame_waits_seen_;
  frame_waits_seen_ = waits;
  if (waits > before) {
    if (!frames_spent_.on) {
      frames_spent_ = {true, now, now, before};
      log::warn("frame memory (limits.frame_memory_bytes) is spent: connections sending large frames wait for it",
                {{"in_use_bytes", std::to_string(frames_->in_use())}, {"waits", std::to_string(waits - before)}});
    }
    frames_spent_.last_said = now;
  } else if (frames_spent_.on && now - frames_spent_.last_said >= std::chrono::seconds(5)) {
    log::info("frame memory is free again: no connection waits for it",
              {{"in_use_bytes", std::to_string(frames_->in_use())},
               {"waits", std::to_string(waits - frames_spent_.count_before)},
               {"lasted_s", seconds_since(frames_spent_.since, now)}});
    frames_spent_.on = false;
  }
}

}  // namespace weir
