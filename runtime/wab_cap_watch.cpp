#include "runtime/wab_cap_watch.hpp"

#include "observability/log.hpp"
#include "observability/status_report.hpp"

namespace weir {

namespace {

constexpr auto remind_every = std::chrono::minutes(1);

}  // namespace

wab_cap_watch::wab_cap_watch(std::shared_ptr<wab::wab_usage> usage, const metrics& stats,
                             std::vector<metrics::sink_state> sinks, std::chrono::milliseconds every)
    : usage_(std::move(usage)), stats_(stats), sinks_(std::move(sinks)) {
  thread_ = std::thread([this, every] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, every, [this] { return stopping_; })) {
      lock.unlock();
      look();
      lock.lock();
    }
  });
}

wab_cap_watch::~wab_cap_watch() {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void wab_cap_watch::look() {
  const bool over = usage_->over_cap();
  const auto now = std::chrono::steady_clock::now();
  if (over && (!over_ || now - last_said_ >= remind_every)) {
    if (!over_) {
      since_ = now;
      refused_before_ = usage_->rejections();
    }
    log::warn(over_ ? "the WAB is still at limits.wab_max_bytes; pushes are refused"
                    : "the WAB reached limits.wab_max_bytes; pushes are refused until the sinks confirm records",
              {{"wab_bytes", std::to_string(usage_->bytes())},
               {"max_bytes", std::to_string(usage_->cap())},
               {"held_for", sink_holding_wab(stats_, sinks_)},
               {"refused_records", std::to_string(usage_->rejections() - refused_before_)}});
    last_said_ = now;
  } else if (!over && over_) {
    log::info("the WAB is back under limits.wab_max_bytes; pushes are taken again",
              {{"wab_bytes", std::to_string(usage_->bytes())},
               {"refused_records", std::to_string(usage_->rejections() - refused_before_)},
               {"lasted_s", std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now - since_).count())}});
  }
  over_ = over;
}

}  // namespace weir
