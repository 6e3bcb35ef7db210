#include "actors/failover_owner.hpp"

#include <algorithm>
#include <iterator>

namespace weir {

bool reaches_further(const replica_position& a, const replica_position& b) {
  if (a.sequence != b.sequence) return a.sequence > b.sequence;
  return a.offset > b.offset;
}

std::uint16_t failover_owner(const std::vector<failover_candidate>& candidates) {
  const failover_candidate* best = nullptr;
  for (const auto& c : candidates)
    if (!best || reaches_further(c.held, best->held) ||
        (!reaches_further(best->held, c.held) && c.node < best->node))
      best = &c;
  return best ? best->node : 0;
}

namespace {

bool same_view(const std::vector<failover_candidate>& a, const std::vector<failover_candidate>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.node == y.node && x.held.sequence == y.held.sequence && x.held.offset == y.held.offset;
  });
}

}  // namespace

std::optional<std::uint16_t> failover_views::observe(std::uint16_t origin, std::uint16_t shard,
                                                     std::vector<failover_candidate> view) {
  std::sort(view.begin(), view.end(), [](const auto& x, const auto& y) { return x.node < y.node; });
  auto& s = views_[{origin, shard}];
  if (s.beats > 0 && same_view(s.view, view)) {
    ++s.beats;
  } else {
    s.view = std::move(view);
    s.beats = 1;
  }
  if (s.beats < settle_beats) return std::nullopt;
  return failover_owner(s.view);
}

void failover_views::retain(const std::set<std::pair<std::uint16_t, std::uint16_t>>& failed) {
  for (auto it = views_.begin(); it != views_.end();) it = failed.count(it->first) ? std::next(it) : views_.erase(it);
}

}  // namespace weir
