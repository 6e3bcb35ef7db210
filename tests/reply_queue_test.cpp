// The reply queue a connection shares with its shard writer and fsync group:
// replies filled in any order, from any thread, leave in submission order;
// a close goes out after every earlier reply and nothing after it; frame
// memory comes back as its reply goes out; a waiting actor is woken.
#include <mutex>
#include <thread>

#include <caf/scoped_actor.hpp>
#include <catch2/catch.hpp>

#include "actors/frame_budget.hpp"
#include "actors/reply_queue.hpp"
#include "wire/frame.hpp"

#include "support/test_scheduler.hpp"

using namespace weir;

namespace {

/// Records what the queue asked of its socket; any thread may call it.
class recording_socket : public connection_io {
 public:
  void write(byte_buffer bytes) override {
    std::lock_guard<std::mutex> g(m);
    writes.push_back(std::move(bytes));
  }
  void consumed(bool, std::uint64_t, std::uint64_t) override {}
  void hold_frame(std::uint64_t) override {}
  void set_replies_owed(bool is_owed) override {
    std::lock_guard<std::mutex> g(m);
    owed_changes.push_back(is_owed);
  }
  bool write_blocked() const override { return false; }
  void close() override { closes++; }
  void abort() override { closes++; }
  bool unread_input() const override { return false; }

  std::mutex m;
  std::vector<byte_buffer> writes;
  std::vector<bool> owed_changes;
  int closes = 0;
};

byte_buffer reply_of(std::uint64_t n) { return byte_buffer{static_cast<std::uint8_t>(n), static_cast<std::uint8_t>(n >> 8)}; }
std::uint64_t number_of(const byte_buffer& b) { return b.at(0) | (static_cast<std::uint64_t>(b.at(1)) << 8); }

/// A queue whose frames hold `held` bytes of a 1000-byte frame budget.
struct budgeted_queue {
  std::shared_ptr<recording_socket> socket = std::make_shared<recording_socket>();
  std::shared_ptr<frame_budget> budget = std::make_shared<frame_budget>(1000);
  reply_queue queue{socket, nullptr, budget};

  explicit budgeted_queue(std::uint64_t held) { REQUIRE(budget->try_acquire(held)); }
};

}  // namespace

TEST_CASE("replies filled out of order leave in submission order from the filling thread", "[actor][replies]") {
  auto socket = std::make_shared<recording_socket>();
  reply_queue q(socket, nullptr, nullptr);
  std::vector<std::uint64_t> tags;
  for (int i = 0; i < 4; ++i) tags.push_back(q.open({}));
  CHECK(tags == std::vector<std::uint64_t>{0, 1, 2, 3});
  CHECK(socket->owed_changes == std::vector<bool>{true});
  q.fill(2, reply_of(2), 1);
  q.fill(1, reply_of(1), 1);
  CHECK(socket->writes.empty());  // 0 is still owed
  q.fill(2, reply_of(99), 1);     // a second answer to one slot changes nothing
  q.fill(0, reply_of(0), 1);
  REQUIRE(socket->writes.size() == 3);
  for (std::uint64_t i = 0; i < 3; ++i) CHECK(number_of(socket->writes[i]) == i);
  CHECK(socket->owed_changes == std::vector<bool>{true});  // 3 is still owed
  q.fill(3, reply_of(3), 1);
  CHECK(socket->writes.size() == 4);
  CHECK(socket->owed_changes == std::vector<bool>{true, false});  // waits on its peer again
  q.fill(7, reply_of(7), 1);  // never opened: ignored
  CHECK(socket->writes.size() == 4);
}

TEST_CASE("a close goes out after every earlier reply and nothing goes out after it", "[actor][replies]") {
  budgeted_queue b(300);
  auto& [socket, budget, q] = b;
  const auto durable = q.open({tier_label::durable, 1, {}, 100});
  CHECK_FALSE(q.answer({tier_label::none, 0, {}, 200}, wire::encode_nack(wire::nack_reason::bad_magic), true));
  const auto after = q.open({});
  CHECK(socket->closes == 0);  // the Nack waits behind the owed ack
  CHECK(q.fill(durable, reply_of(5), 1));  // this fill wrote the close
  REQUIRE(socket->writes.size() == 2);
  CHECK(number_of(socket->writes[0]) == 5);
  CHECK(socket->writes[1] == wire::encode_nack(wire::nack_reason::bad_magic));
  CHECK(socket->closes == 1);
  CHECK(budget->in_use() == 0);  // both frames' memory given back as their replies went
  q.fill(after, reply_of(6), 1);
  CHECK(socket->writes.size() == 2);
}

TEST_CASE("an abandoned queue gives its frame memory back and writes nothing more", "[actor][replies]") {
  budgeted_queue b(400);
  auto& [socket, budget, q] = b;
  const auto a = q.open({tier_label::durable, 1, {}, 400});
  q.abandon();
  CHECK(budget->in_use() == 0);
  q.fill(a, reply_of(1), 1);  // a sync that returned after the connection went
  CHECK(socket->writes.empty());
}

TEST_CASE("an actor that waits for room is woken by the next reply written", "[actor][replies]") {
  test::test_scheduler ts;
  caf::scoped_actor owner{ts.sys()};
  auto socket = std::make_shared<recording_socket>();
  reply_queue q(socket, nullptr, nullptr);
  q.set_owner(owner->address());
  const auto first = q.open({});
  CHECK(q.has_room(2));  // room: nobody asks to be woken
  q.open({});
  CHECK_FALSE(q.has_room(2));
  q.fill(1, reply_of(1), 1);  // behind the first: no slot freed, no wake-up
  int woken = 0;
  auto count = [&] {
    owner->receive([&](replies_written_atom) { ++woken; }, caf::after(std::chrono::seconds(0)) >> [] {});
  };
  count();
  CHECK(woken == 0);
  q.fill(first, reply_of(0), 1);
  count();
  CHECK(woken == 1);
  q.open({});
  q.fill(2, reply_of(2), 1);  // nobody waits now
  count();
  CHECK(woken == 1);
}

TEST_CASE("replies filled from two threads at once still leave in submission order", "[actor][replies]") {
  auto socket = std::make_shared<recording_socket>();
  reply_queue q(socket, nullptr, nullptr);
  constexpr std::uint64_t n = 20000;
  for (std::uint64_t i = 0; i < n; ++i) q.open({});
  auto filler = [&](std::uint64_t parity) {
    for (std::uint64_t i = parity; i < n; i += 2) q.fill(i, reply_of(i), 1);
  };
  std::thread odd(filler, 1);
  filler(0);
  odd.join();
  REQUIRE(socket->writes.size() == n);
  std::uint64_t in_order = 0;
  for (std::uint64_t i = 0; i < n; ++i) in_order += number_of(socket->writes[i]) == (i & 0xffff);
  CHECK(in_order == n);
}
