// segment_release: a shard's segment goes once every sink's drain stored a
// cursor past it, by one drain, and its bytes come off the usage once.
#include <catch2/catch.hpp>

#include "actors/drain/segment_release.hpp"

using weir::drain_parts::segment_release;

TEST_CASE("segment release: segments below the slowest sink's stored cursor may go and it says when that moves",
          "[drain][sinks]") {
  segment_release r(2, nullptr);
  auto v = r.stored(0, 5);
  CHECK(v.below == 0);  // sink 1 has stored nothing yet: it holds everything
  CHECK_FALSE(v.moved);
  v = r.stored(1, 3);
  CHECK(v.below == 3);
  CHECK(v.moved);
  CHECK_FALSE(r.stored(1, 3).moved);
  CHECK_FALSE(r.stored(0, 9).moved);  // the faster sink moving on frees nothing
  v = r.stored(1, 7);
  CHECK(v.below == 7);
  CHECK(v.moved);
  CHECK(r.stored(1, 2).below == 7);  // a cursor never goes back
}

TEST_CASE("segment release: a segment is removed by one drain and its bytes leave the usage once",
          "[drain][sinks]") {
  auto usage = std::make_shared<weir::wab::wab_usage>(1 << 30);
  usage->add(1000);
  segment_release r(2, usage);
  int removed = 0;
  auto remove = [&] {
    ++removed;
    return 0;
  };
  CHECK(r.remove_once(4, 400, remove) == 0);
  CHECK(r.remove_once(4, 400, remove) == 0);  // the other sink's drain: gone already
  CHECK(removed == 1);
  CHECK(usage->bytes() == 600);
  // A removal that fails is tried again by whoever comes next.
  CHECK(r.remove_once(5, 100, [] { return -5; }) == -5);
  CHECK(usage->bytes() == 600);
  CHECK(r.remove_once(5, 100, remove) == 0);
  CHECK(removed == 2);
  CHECK(usage->bytes() == 500);
  // Bytes read past a seal count once, whichever drain read them, and go with the segment.
  r.extended(6, 200, 300);
  r.extended(6, 200, 300);
  CHECK(usage->bytes() == 600);
  CHECK(r.remove_once(6, 200, remove) == 0);
  CHECK(usage->bytes() == 300);
  // Once every segment below 7 is known gone, none of them is removed again.
  r.all_gone_below(7);
  CHECK(r.remove_once(4, 400, remove) == 0);
  CHECK(removed == 3);
  CHECK(usage->bytes() == 300);
}
