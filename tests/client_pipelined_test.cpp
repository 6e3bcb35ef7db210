// libweir-client's pipelined producer against the real daemon: thousands of
// frames in flight on one connection, every completion in send order, the
// window never exceeded, and a daemon killed with frames in flight ending
// the stream with a retryable client_error instead of a hang.
#include <signal.h>

#include <chrono>
#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "support/daemon_process.hpp"
#include "support/test_paths.hpp"
#include "weir/client.hpp"

using namespace weir;

namespace {

constexpr std::size_t window = 2048;

/// A daemon in ordered ack mode that takes a whole window of one connection
/// in before answering: at the default ingest.max_inflight (256) it stops
/// reading past 256 frames owed, and the rest of the window would only wait
/// in the socket buffer, not be in flight at the daemon.
std::vector<std::string> pipelining_daemon() {
  return {"--set", "sink.type=noop", "--set", "ingest.ack_mode=ordered",
          "--set", "ingest.max_inflight=" + std::to_string(window)};
}

std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace

TEST_CASE("client: a pipelined producer completes every push in order within its window", "[live][client]") {
  test::temp_dir dir;
  test::daemon_process d(dir.path(), pipelining_daemon());
  REQUIRE(d.wait_ready());
  auto conn = client::connection::connect_unix(d.socket_path());
  constexpr std::size_t records = 20000;
  client::pipelined_producer p(conn, window);
  std::size_t completed = 0, acked = 0, out_of_order = 0, over_window = 0;
  const std::string payload(64, 'p');
  for (std::size_t i = 0; i < records; ++i) {
    p.push(bytes_of(payload), client::durability::durable, [&, i](const client::push_result& r) {
      out_of_order += i != completed;
      ++completed;
      acked += r.acked;
    });
    over_window += p.in_flight() > window;
  }
  p.flush();
  CHECK(p.in_flight() == 0);
  CHECK(completed == records);
  CHECK(acked == records);
  CHECK(out_of_order == 0);
  CHECK(over_window == 0);
  CHECK(p.peak_in_flight() >= 1000);  // thousands in flight, not a few
  CHECK(p.peak_in_flight() <= window);
  // The connection is still good for plain calls.
  CHECK(conn.push(bytes_of(payload), client::durability::durable).acked);
  CHECK(d.stop() == 0);
}

TEST_CASE("client: a daemon killed with frames in flight ends the pipelined producer with a retryable client_error",
          "[live][client]") {
  test::temp_dir dir;
  test::daemon_process d(dir.path(), pipelining_daemon());
  REQUIRE(d.wait_ready());
  auto conn = client::connection::connect_unix(d.socket_path());
  // A backstop only: a producer that hung on the dead daemon would end in
  // kind timeout here, which the checks below tell from connection_lost.
  conn.set_timeout(std::chrono::seconds(30));
  client::pipelined_producer p(conn, window);
  // The daemon dies inside a completion, mid-stream: the producer has
  // frames in flight and goes on pushing.
  std::size_t completed = 0, in_flight_at_kill = 0;
  auto on_done = [&](const client::push_result&) {
    if (++completed != 5000) return;
    in_flight_at_kill = p.in_flight();
    ::kill(d.pid(), SIGKILL);
  };
  const std::string payload(64, 'k');
  std::optional<client::client_error> failure;
  const auto started = std::chrono::steady_clock::now();
  try {
    for (int i = 0; i < 2'000'000; ++i) p.push(bytes_of(payload), client::durability::durable, on_done);
    p.flush();
  } catch (const client::client_error& e) {
    failure = e;
  }
  const auto took = std::chrono::steady_clock::now() - started;
  REQUIRE(failure);
  INFO(failure->what());
  CHECK(in_flight_at_kill > 0);  // killed with frames unanswered, not after a flush
  CHECK(failure->kind() == client::error_kind::connection_lost);
  CHECK(failure->retryable());  // whether the frames in flight were written is unknown
  CHECK(p.in_flight() > 0);     // they are left without a verdict, to push again
  CHECK(took < std::chrono::seconds(20));
  CHECK(d.wait_exit() != 0);
}
