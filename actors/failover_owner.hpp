#pragma once
// Which survivor delivers a failed node's shard. Every survivor computes the
// answer on its own, from its copy and the copy ends its peers sent in their
// heartbeats, and no message settles a disagreement beforehand: two
// survivors that answered from different views would both deliver the shard
// until their heartbeats showed it (membership then lets one keep it, by
// `failover_owner` over the two). So the answer is taken only from a view
// that every survivor shares:
//  - the candidates are every survivor that is not itself failed over (a peer
//    merely late or briefly gone still counts: it answers for itself, and a
//    survivor that left it out would take the shard beside it);
//  - the copy ends have stopped moving: the same on `settle_beats`
//    heartbeats in a row, so the peers have had this node's end, and this
//    node theirs, before anyone answers.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "messages/cluster_protocol.hpp"

namespace weir {

struct failover_candidate {
  std::uint16_t node = 0;
  replica_position held;  // its copy of the shard ({} when it holds none)
};

/// Whether copy `a` reaches further into the origin's WAB than copy `b`.
bool reaches_further(const replica_position& a, const replica_position& b);

/// The candidate whose copy reaches furthest; the lowest node id on a tie.
/// (Copies are prefixes of the origin's WAB: the furthest holds every
/// record, and every Replicated ack, that any other holds.)
std::uint16_t failover_owner(const std::vector<failover_candidate>& candidates);

/// Per failed shard, how many heartbeats in a row showed the same candidates
/// with the same copy ends.
class failover_views {
 public:
  static constexpr int settle_beats = 3;

  /// Records this heartbeat's view of (origin, shard); the owner once the
  /// view has settled, else nothing.
  std::optional<std::uint16_t> observe(std::uint16_t origin, std::uint16_t shard,
                                       std::vector<failover_candidate> view);
  /// Forgets every shard but `failed` ones: a shard decided, or whose
  /// origin is back, starts over should it fail again.
  void retain(const std::set<std::pair<std::uint16_t, std::uint16_t>>& failed);

 private:
  struct seen {
    std::vector<failover_candidate> view;
    int beats = 0;
  };
  std::map<std::pair<std::uint16_t, std::uint16_t>, seen> views_;
};

}  // namespace weir
