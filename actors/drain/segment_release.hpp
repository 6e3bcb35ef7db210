#pragma once
// segment_release: when a shard's segment files may go. Each sink has a
// drain of its own per shard, with its own cursor; a segment is deleted (or
// kept as a spare) once every one of them has stored a cursor past it, by
// whichever drain finds that first, and its bytes come off the WAB's usage
// exactly once. Shared by the shard's drains (each on its own thread).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "wab/wab_usage.hpp"

namespace weir::drain_parts {

class segment_release {
 public:
  /// `usage` may be null (nothing counted).
  segment_release(std::size_t sinks, std::shared_ptr<wab::wab_usage> usage);

  struct verdict {
    std::uint64_t below = 0;  // every sink's stored cursor is at or past this segment
    bool moved = false;       // it moved with this store
  };
  /// Sink `sink`'s stored cursor is in segment `sequence` now. (A sink
  /// that stored none yet holds everything.)
  verdict stored(std::size_t sink, std::uint64_t sequence);

  /// Removes segment `seq` (whose records end at `end` as this drain knows
  /// it) through `remove` — 0 or -errno — unless another drain did: 0 when
  /// it is gone, now or before. Its bytes come off the usage once.
  template <class Remove>
  int remove_once(std::uint64_t seq, std::uint64_t end, Remove&& remove) {
    std::lock_guard<std::mutex> guard(mutex_);
    if (seq < gone_below_ || gone_.count(seq)) return 0;
    if (int rc = remove(); rc < 0) return rc;
    gone_.insert(seq);
    forget_extension(seq, end);
    return 0;
  }

  /// A drain removed, or found gone, every segment below `below` it knew
  /// (and every drain of the shard knows the same segments).
  void all_gone_below(std::uint64_t below);

  /// A drain read segment `seq` past its seal's end (`from`) to `to`: those
  /// bytes count in the usage once, whichever drain read them first.
  void extended(std::uint64_t seq, std::uint64_t from, std::uint64_t to);

 private:
  void forget_extension(std::uint64_t seq, std::uint64_t end);

  std::mutex mutex_;
  std::shared_ptr<wab::wab_usage> usage_;
  std::vector<std::uint64_t> stored_;  // by sink: the segment of its stored cursor (0: none yet)
  std::uint64_t below_ = 0;
  std::uint64_t gone_below_ = 0;
  std::set<std::uint64_t> gone_;  // removed, at or above gone_below_
  std::map<std::uint64_t, std::uint64_t> extended_to_;  // segments read past their seal: the end counted
};

}  // namespace weir::drain_parts
