// A burst of one event is a line at once, then at most one per interval,
// each counting the events it stands for.
#include <catch2/catch.hpp>

#include "observability/log_throttle.hpp"

using weir::log_throttle;
using namespace std::chrono_literals;

namespace {
constexpr std::int64_t ms = 1'000'000;
}

TEST_CASE("a throttled log line comes at once then once per interval with the count it stands for", "[log]") {
  log_throttle t(10s);
  CHECK(t.admit(5 * ms) == 1);  // the first event of all: at once
  CHECK(t.admit(6 * ms) == 0);
  CHECK(t.admit(9'000 * ms) == 0);
  CHECK(t.admit(10'004 * ms) == 0);  // just inside the interval
  CHECK(t.admit(10'005 * ms) == 4);  // this one and the three before it
  CHECK(t.admit(20'004 * ms) == 0);
  CHECK(t.admit(40'000 * ms) == 2);  // a quiet spell: the next line comes at once
  CHECK(t.admit(40'001 * ms) == 0);
}

TEST_CASE("a throttled log line on the steady clock comes for the first event only", "[log]") {
  log_throttle t(10s);
  CHECK(t.admit() == 1);
  CHECK(t.admit() == 0);
}
