#pragma once
// damage_claims: which of a shard's drains speaks for the damage in a
// segment. Each sink's drain reads the same files and meets the same
// damage; the first to meet it in a segment reports it (the log line, the
// copy to quarantine) and counts it in the shard's metrics, whichever sink
// it feeds and however far ahead it is. The others skip the same records,
// counting them lost for their own sink only. Shared by the shard's drains.
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace weir::drain_parts {

class damage_claims {
 public:
  /// True for the drain of sink `sink` that speaks for segment `seq`'s
  /// damage: the first to ask.
  bool speaks_for(std::uint64_t seq, std::size_t sink) {
    std::lock_guard<std::mutex> guard(mutex_);
    return speaker_.emplace(seq, sink).first->second == sink;
  }
  /// Segments below `seq` are gone.
  void forget_below(std::uint64_t seq) {
    std::lock_guard<std::mutex> guard(mutex_);
    speaker_.erase(speaker_.begin(), speaker_.lower_bound(seq));
  }

 private:
  std::mutex mutex_;
  std::map<std::uint64_t, std::size_t> speaker_;
};

}  // namespace weir::drain_parts
