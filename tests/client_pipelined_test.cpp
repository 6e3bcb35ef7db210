// libweir-client's pipelined producer against the real daemon: many frames
// in flight on one connection, every completion in send order, the window
// never exceeded, and a daemon killed mid-stream ending the stream with a
// client_error instead of a hang.
#include <signal.h>

#include <string>

#include <catch2/catch.hpp>

#include "support/daemon_process.hpp"
#include "support/test_paths.hpp"
#include "weir/client.hpp"

using namespace weir;

namespace {

std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace

TEST_CASE("client: a pipelined producer completes every push in order within its window", "[live][client]") {
  test::temp_dir dir;
  test::daemon_process d(dir.path(), {"--set", "sink.type=noop", "--set", "ingest.ack_mode=ordered"});
  REQUIRE(d.wait_ready());
  auto conn = client::connection::connect_unix(d.socket_path());
  constexpr std::size_t window = 2048;
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
  CHECK(p.peak_in_flight() > 1);  // it did pipeline
  CHECK(p.peak_in_flight() <= window);
  // The connection is still good for plain calls.
  CHECK(conn.push(bytes_of(payload), client::durability::durable).acked);
  CHECK(d.stop() == 0);
}

TEST_CASE("client: a daemon killed under a pipelined producer ends it with a client_error", "[live][client]") {
  test::temp_dir dir;
  test::daemon_process d(dir.path(), {"--set", "sink.type=noop", "--set", "ingest.ack_mode=ordered"});
  REQUIRE(d.wait_ready());
  auto conn = client::connection::connect_unix(d.socket_path());
  client::pipelined_producer p(conn, 512);
  std::size_t acked = 0;
  const std::string payload(64, 'k');
  for (int i = 0; i < 1000; ++i)
    p.push(bytes_of(payload), client::durability::durable, [&](const client::push_result& r) { acked += r.acked; });
  p.flush();
  REQUIRE(acked == 1000);
  ::kill(d.pid(), SIGKILL);
  REQUIRE(d.wait_exit() != 0);
  bool failed = false;
  try {
    for (int i = 0; i < 100000; ++i) p.push(bytes_of(payload), client::durability::durable);
    p.flush();
  } catch (const client::client_error&) {
    failed = true;  // the outcome of what was in flight is unknown: push it again
  }
  CHECK(failed);
}
