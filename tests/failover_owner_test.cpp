// Which survivor delivers a failed node's shard (actors/failover_owner.hpp):
// the furthest copy, the lowest node id on a tie, and only once every
// survivor's view of the copy ends has settled.
#include <catch2/catch.hpp>

#include "actors/failover_owner.hpp"

using namespace weir;

namespace {

replica_position at(std::uint64_t sequence, std::uint64_t offset) { return {2, 0, sequence, offset, 1, false}; }

}  // namespace

TEST_CASE("failover owner: the furthest copy by segment then offset and the lowest node id on a tie") {
  CHECK(failover_owner({}) == 0);
  CHECK(failover_owner({{3, at(2, 10)}, {1, at(1, 900)}}) == 3);
  CHECK(failover_owner({{1, at(2, 10)}, {3, at(2, 11)}}) == 3);
  CHECK(failover_owner({{3, at(2, 500)}, {1, at(2, 500)}}) == 1);
  CHECK(failover_owner({{4, at(2, 500)}, {3, at(2, 500)}, {1, at(1, 500)}}) == 3);
  CHECK(failover_owner({{3, {}}, {5, {}}}) == 3);  // nobody holds it: still one answer
}

TEST_CASE("failover views: an owner only after the same view on settle_beats heartbeats in a row") {
  failover_views views;
  const std::vector<failover_candidate> view{{1, at(2, 500)}, {3, at(2, 400)}};
  for (int beat = 1; beat < failover_views::settle_beats; ++beat) CHECK_FALSE(views.observe(2, 0, view));
  CHECK(views.observe(2, 0, view) == std::optional<std::uint16_t>(1));
  // The candidates' order is not part of the view.
  CHECK(views.observe(2, 0, {{3, at(2, 400)}, {1, at(2, 500)}}) == std::optional<std::uint16_t>(1));

  // A copy end that moves, or a candidate that leaves, starts the count over.
  CHECK_FALSE(views.observe(2, 0, {{1, at(2, 500)}, {3, at(2, 600)}}));
  CHECK_FALSE(views.observe(2, 0, {{1, at(2, 500)}}));
  CHECK_FALSE(views.observe(2, 0, {{1, at(2, 500)}}));
  CHECK(views.observe(2, 0, {{1, at(2, 500)}}) == std::optional<std::uint16_t>(1));

  // Shards are counted apart, and a shard not retained starts over.
  CHECK_FALSE(views.observe(2, 1, view));
  views.retain({{2, 1}});
  CHECK(views.observe(2, 1, view) == std::nullopt);
  CHECK(views.observe(2, 1, view) == std::optional<std::uint16_t>(1));
  CHECK_FALSE(views.observe(2, 0, {{1, at(2, 500)}}));
}

// Two survivors whose copies of the failed node's shard still grow for a few
// heartbeats after it died (the last chunks are synced late), each seeing the
// other's end one heartbeat late. Answering on each heartbeat's view, both
// would take the shard at some heartbeat; answering on settled views, they
// agree every time.
TEST_CASE("failover views: two survivors a heartbeat apart never both take a shard") {
  struct trace {
    std::vector<replica_position> node1, node3;  // each survivor's own copy end, per heartbeat
  };
  const std::vector<trace> traces{
      {{at(2, 300), at(2, 500), at(2, 500), at(2, 500), at(2, 500), at(2, 500)},
       {at(2, 400), at(2, 400), at(2, 500), at(2, 500), at(2, 500), at(2, 500)}},
      {{at(1, 900), at(2, 100), at(2, 100), at(2, 100), at(2, 100), at(2, 100)},
       {at(2, 50), at(2, 50), at(2, 200), at(2, 200), at(2, 200), at(2, 200)}},
      {{at(2, 700), at(2, 700), at(2, 700), at(2, 700), at(2, 700), at(2, 700)},
       {at(2, 600), at(2, 800), at(2, 800), at(2, 800), at(2, 800), at(2, 800)}},
  };
  int unsettled_conflicts = 0, settled_answers = 0;
  for (const auto& t : traces) {
    failover_views views1, views3;
    std::optional<std::uint16_t> owner1, owner3;  // the first answer each gives
    for (std::size_t beat = 1; beat < t.node1.size(); ++beat) {
      const std::vector<failover_candidate> seen_by_1{{1, t.node1[beat]}, {3, t.node3[beat - 1]}};
      const std::vector<failover_candidate> seen_by_3{{3, t.node3[beat]}, {1, t.node1[beat - 1]}};
      if (failover_owner(seen_by_1) == 1 && failover_owner(seen_by_3) == 3) ++unsettled_conflicts;
      if (!owner1) owner1 = views1.observe(2, 0, seen_by_1);
      if (!owner3) owner3 = views3.observe(2, 0, seen_by_3);
    }
    REQUIRE(owner1);
    REQUIRE(owner3);
    CHECK(*owner1 == *owner3);
    ++settled_answers;
  }
  CHECK(settled_answers == 3);
  CHECK(unsettled_conflicts >= 3);  // the race is real in every trace
}
