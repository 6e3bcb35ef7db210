#include "actors/drain/segment_release.hpp"

#include <algorithm>

namespace weir::drain_parts {

segment_release::segment_release(std::size_t sinks, std::shared_ptr<wab::wab_usage> usage)
    : usage_(std::move(usage)), stored_(std::max<std::size_t>(sinks, 1), 0) {}

segment_release::verdict segment_release::stored(std::size_t sink, std::uint64_t sequence) {
  std::lock_guard<std::mutex> guard(mutex_);
  stored_.at(sink) = std::max(stored_.at(sink), sequence);
  const std::uint64_t below = *std::min_element(stored_.begin(), stored_.end());
  const bool moved = below > below_;
  below_ = std::max(below_, below);
  return {below_, moved};
}

void segment_release::all_gone_below(std::uint64_t below) {
  std::lock_guard<std::mutex> guard(mutex_);
  gone_below_ = std::max(gone_below_, below);
  gone_.erase(gone_.begin(), gone_.lower_bound(gone_below_));
  extended_to_.erase(extended_to_.begin(), extended_to_.lower_bound(gone_below_));
}

void segment_release::extended(std::uint64_t seq, std::uint64_t from, std::uint64_t to) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto [it, fresh] = extended_to_.emplace(seq, from);
  if (to <= it->second) return;
  if (usage_) usage_->add(to - it->second);
  it->second = to;
}

void segment_release::forget_extension(std::uint64_t seq, std::uint64_t end) {
  auto it = extended_to_.find(seq);
  if (it != extended_to_.end()) {
    end = std::max(end, it->second);
    extended_to_.erase(it);
  }
  if (usage_) usage_->remove(end);
}

}  // namespace weir::drain_parts
