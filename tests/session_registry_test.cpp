// Who makes room at listen.max_connections: the session stalled longest on
// its peer, never one whose next frame waits unread for a busy io thread.
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/connect_pair.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>

#include "transport/session_registry.hpp"
#include "transport/socket_session.hpp"

using namespace weir;
using namespace std::chrono_literals;

namespace {

struct fake_session final : session_control {
  std::optional<clock::time_point> since;
  bool input = false;
  bool evicted = false;
  void request_shutdown() override {}
  void abort() override {}
  void evict() override { evicted = true; }
  std::optional<clock::time_point> stalled_since() const override { return since; }
  bool input_waiting() const override { return input; }
};

/// Admits `s` into `r`; false if the registry refused it.
bool admit(session_registry& r, const std::shared_ptr<fake_session>& s) {
  return r.admit([&](std::function<void()>) { return s; });
}

}  // namespace

TEST_CASE("at the connection limit the longest stalled session goes unless its next frame waits unread",
          "[unit][socket]") {
  listener_stats stats;
  session_registry registry(2, stats);
  const auto t0 = session_control::clock::now();
  auto older = std::make_shared<fake_session>();
  older->since = t0;
  older->input = true;  // its reply went out at t0; its next frame has come and not been read
  auto younger = std::make_shared<fake_session>();
  younger->since = t0 + 1s;
  REQUIRE(admit(registry, older));
  REQUIRE(admit(registry, younger));

  auto newcomer = std::make_shared<fake_session>();
  CHECK(admit(registry, newcomer));
  CHECK_FALSE(older->evicted);
  CHECK(younger->evicted);

  SECTION("with nothing unread, the oldest stamp goes") {
    older->input = false;
    CHECK(admit(registry, std::make_shared<fake_session>()));
    CHECK(older->evicted);
  }
  SECTION("when every stalled session has input waiting, the newcomer is refused") {
    newcomer->input = true;
    newcomer->since = t0 + 2s;
    CHECK_FALSE(admit(registry, std::make_shared<fake_session>()));
    CHECK_FALSE(older->evicted);
    CHECK_FALSE(newcomer->evicted);
    CHECK(stats.rejected_over_limit == 1);
  }
}

TEST_CASE("at the connection limit the oldest stamp goes first whatever the order of admission", "[unit][socket]") {
  listener_stats stats;
  session_registry registry(4, stats);
  const auto t0 = session_control::clock::now();
  std::vector<std::shared_ptr<fake_session>> held;
  for (int offset : {2, 0, 3, 1}) {
    held.push_back(std::make_shared<fake_session>());
    held.back()->since = t0 + std::chrono::seconds(offset);
    REQUIRE(admit(registry, held.back()));
  }
  held[1]->input = true;  // the oldest has its next frame waiting: the next oldest goes
  CHECK(admit(registry, std::make_shared<fake_session>()));
  CHECK(held[3]->evicted);
  CHECK_FALSE(held[0]->evicted);
  CHECK_FALSE(held[1]->evicted);
  CHECK_FALSE(held[2]->evicted);
}

TEST_CASE("a session between frames tells when its peer's next bytes wait unread", "[unit][socket]") {
  listener_stats stats;
  boost::asio::io_context io;
  boost::asio::local::stream_protocol::socket ours(io), peer(io);
  boost::asio::local::connect_pair(ours, peer);
  auto session = std::make_shared<unix_session>(std::move(ours), 1000ms, stats, nullptr);
  // The actor has consumed everything and owes no reply: the session arms
  // its next read and waits on its peer.
  session->consumed(false, 1, 0);
  io.poll();
  REQUIRE(session->stalled_since().has_value());
  CHECK_FALSE(session->input_waiting());

  // The peer's next frame arrives while the io thread is elsewhere (the
  // context is not run): still stamped as waiting, but the daemon owes the read.
  const std::uint8_t bytes[] = {'W', 'E', 'I', 'R'};
  boost::asio::write(peer, boost::asio::buffer(bytes));
  CHECK(session->stalled_since().has_value());
  CHECK(session->input_waiting());

  SECTION("inside a frame the clock runs from its first byte, whatever is unread") {
    session->consumed(true, 1, 0);
    CHECK_FALSE(session->input_waiting());
  }
}
