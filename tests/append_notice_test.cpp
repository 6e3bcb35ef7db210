// The notice the shard writer and the drain share: a message is asked for,
// given once, and owed only for news the drain has not taken.
#include <catch2/catch.hpp>

#include "actors/append_notice.hpp"

using weir::append_notice;

TEST_CASE("append notice: a write asks for a message only when the drain waits for one", "[drain][notice]") {
  append_notice n;
  CHECK_FALSE(n.publish(1, 100, 1));  // nobody asked
  CHECK(n.wake_after(0, 0));          // news not taken yet: take it instead of waiting
  auto w = n.take();
  CHECK(w.sequence == 1);
  CHECK(w.end == 100);
  CHECK_FALSE(n.wake_after(0, 0));  // caught up: now it waits
  CHECK(n.publish(1, 150, 1));      // the next write sends the message
  CHECK_FALSE(n.publish(1, 200, 1));  // once
}

TEST_CASE("append notice: a lingering drain is asked for once the writes could fill its batch", "[drain][notice]") {
  append_notice n;
  n.publish(1, 100, 1);
  n.take();
  CHECK_FALSE(n.wake_after(1000, 3));
  CHECK_FALSE(n.publish(1, 200, 1));
  CHECK_FALSE(n.publish(1, 300, 1));
  CHECK(n.publish(1, 400, 1));  // three records since the take
  n.take();
  CHECK_FALSE(n.wake_after(1000, 3));
  CHECK(n.publish(1, 1400, 1));  // 1000 bytes since the take
  n.take();
  CHECK_FALSE(n.wake_after(1000, 3));
  CHECK(n.publish(2, 50, 0));  // a new segment
}

TEST_CASE("append notice: a retired segment is never named again", "[drain][notice]") {
  append_notice n;
  n.publish(4, 100, 1);
  n.retire(3);  // not the written one: nothing changes
  CHECK(n.take().sequence == 4);
  n.publish(4, 120, 1);
  n.retire(4);
  CHECK(n.wake_after(0, 0));
  const auto w = n.take();
  CHECK(w.sequence == 0);
  CHECK_FALSE(n.wake_after(0, 0));
  CHECK(n.publish(5, 40, 0));
  CHECK(n.take().sequence == 5);
}

TEST_CASE("append notice: growth past a lingering drain's thresholds is reported at once and a take drops the wish",
          "[drain][notice]") {
  append_notice n;
  n.publish(1, 100, 1);
  n.take();
  n.publish(1, 200, 2);
  CHECK(n.wake_after(1000, 2));  // two records already: no waiting
  CHECK(n.take().end == 200);
  CHECK_FALSE(n.wake_after(0, 0));
  n.take();                          // the drain looked again without asking
  CHECK_FALSE(n.publish(1, 300, 1));  // so no message
  CHECK(n.wake_after(0, 0));          // and asking finds the write waiting
}
