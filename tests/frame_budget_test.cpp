// Which shares of frame memory the head of the line takes back, by pace:
// a peer sending next to nothing goes, a producer that lost the race for a
// shared link (a sixth of the steady pace for now) stays.
#include <catch2/catch.hpp>

#include "actors/frame_budget.hpp"

using namespace weir;

namespace {

class quiet_socket : public connection_io {
 public:
  void write(byte_buffer) override {}
  void consumed(bool, std::uint64_t, std::uint64_t) override {}
  void set_replies_owed(bool) override {}
  void hold_frame(std::uint64_t) override {}
  bool write_blocked() const override { return false; }
  void close() override {}
  void abort() override { aborted = true; }
  bool unread_input() const override { return false; }
  bool aborted = false;
};

constexpr std::int64_t second = 1'000'000'000;
constexpr std::uint64_t MiB = 1024 * 1024;

/// Stall 1 s, read timeout 30 s: judged on pace after 5 s.
reclaim_rule at(std::int64_t now_ns) { return {now_ns, second, 30 * second}; }

}  // namespace

TEST_CASE("frame memory goes back from a peer sending next to nothing and not from one losing a shared link",
          "[budget]") {
  frame_budget budget(32 * MiB);
  auto trickler_io = std::make_shared<quiet_socket>();
  auto shared_io = std::make_shared<quiet_socket>();
  REQUIRE(budget.try_acquire(16 * MiB));
  REQUIRE(budget.try_acquire(16 * MiB));
  // The trickler sent half its payload at once and then slowed to a
  // trickle: further along than the other, it would be the last to go if
  // both counted as hopeless.
  auto trickler = std::make_shared<frame_hold>(16 * MiB, 0, 8 * MiB, trickler_io, at(0));
  auto shared = std::make_shared<frame_hold>(16 * MiB, 0, 0, shared_io, at(0));
  budget.track(trickler);
  budget.track(shared);
  const auto ticket = budget.wait();
  // Every 100 ms: the trickler 16 bytes; the other a sixth of the 16 MiB
  // in 30 s pace (about 93 KiB a second), never quiet.
  std::int64_t now = 0;
  auto run_until = [&](std::int64_t end) {
    for (; now < end;) {
      now += second / 10;
      trickler->arrived(16, now);
      shared->arrived(16 * MiB / 300 / 6, now);
      budget.reclaim_stalled(16 * MiB, ticket, at(now));
    }
  };
  run_until(4 * second);  // within the grace nobody is judged on pace
  CHECK_FALSE(trickler_io->aborted);
  run_until(6 * second);
  CHECK(trickler_io->aborted);
  CHECK_FALSE(shared_io->aborted);
  CHECK(budget.reclaims() == 1);
}
