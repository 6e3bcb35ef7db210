// Retiring a host: `weir-ctl drain` signals the daemon, which stops taking
// pushes, delivers everything to every sink and stops; weir-ctl waits and
// checks what the daemon left. A sink that is down makes it time out naming
// the sink; a SIGTERM meanwhile keeps the rest for the next start.
#include <future>
#include <thread>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "support/daemon_process.hpp"
#include "support/http_get.hpp"
#include "support/http_test_server.hpp"
#include "support/sink_contents.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "weir/client.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> two_sinks(const temp_dir& dir, const http_test_server& hook, std::uint16_t admin) {
  return {"--set", "sinks=[{name: db, type: sqlite, sqlite: {path: " + (dir / "sink.db").string() +
                       "}}, {name: hook, type: http, http: {url: \"" + hook.url() + "\", format: raw}}]",
          "--set", "sink.retry.initial_ms=50", "--set", "sink.retry.max_ms=200",
          "--set", "admin.listen=127.0.0.1:" + std::to_string(admin)};
}

run_result drain(const temp_dir& dir, std::uint16_t admin, const std::vector<std::string>& more = {}) {
  std::vector<std::string> args{"--data-dir", (dir / "var").string(), "--admin", "127.0.0.1:" + std::to_string(admin),
                                "drain"};
  args.insert(args.end(), more.begin(), more.end());
  return run_binary(binary("weir-ctl"), args, dir.path(), {}, 120s);
}

void push(const daemon_process& d, int n) {
  auto c = client::connection::connect_unix(d.socket_path());
  for (int i = 0; i < n; ++i)
    REQUIRE(c.push(as_bytes("retire " + std::to_string(i)), client::durability::buffered).acked);
}

}  // namespace

TEST_CASE("retire: weir-ctl drain stops pushes and delivers every record to every sink before the daemon exits",
          "[live][ctl][retire]") {
  temp_dir dir;
  // A slow endpoint: the records are still on their way when the drain starts.
  http_test_server hook([](const http_request_seen&, std::size_t) {
    http_answer a;
    a.delay = 20ms;
    return a;
  });
  const auto admin = free_tcp_port();
  daemon_process d(dir.path(), two_sinks(dir, hook, admin));
  REQUIRE(d.wait_ready());
  const int records = 1000;
  push(d, records);
  REQUIRE(hook.accepted().size() < static_cast<std::size_t>(records));
  const auto r = drain(dir, admin);
  INFO(r.out << r.err << d.log());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("retired: weir-server (pid " + std::to_string(d.pid()) + ") stopped") != std::string::npos);
  CHECK(d.wait_exit() == 0);
  CHECK(hook.accepted_bodies().size() == static_cast<std::size_t>(records));
  CHECK(sqlite_rows(dir / "sink.db").size() == static_cast<std::size_t>(records));
  CHECK(d.log().find("retiring: every record is delivered to every sink; stopping") != std::string::npos);
  // Nothing runs on the data directory any more.
  const auto again = drain(dir, admin);
  CHECK(again.exit_code == 2);
  CHECK(again.err.find("no weir-server runs on") != std::string::npos);
  CHECK(again.err.find("nothing undelivered is in its WAB") != std::string::npos);
}

TEST_CASE("retire: a sink that is down makes weir-ctl drain time out naming it and a SIGTERM keeps the rest",
          "[live][ctl][retire]") {
  temp_dir dir;
  http_test_server hook;
  hook.stop();
  const auto admin = free_tcp_port();
  const int records = 200;
  {
    daemon_process d(dir.path(), two_sinks(dir, hook, admin));
    REQUIRE(d.wait_ready());
    push(d, records);
    const auto timed_out = drain(dir, admin, {"--timeout", "2"});
    INFO(timed_out.out << timed_out.err << d.log());
    CHECK(timed_out.exit_code == 1);
    CHECK(timed_out.out.find("gave up after 2 s: 200 records left: hook 200 (down") != std::string::npos);
    // Still retiring: not ready, and no push is taken.
    const auto ready = http_request(admin, "/readyz");
    CHECK(ready.status == 503);
    CHECK(ready.body.find("retiring: no pushes are taken; delivering the 200 records left") != std::string::npos);
    CHECK_THROWS(client::connection::connect_unix(d.socket_path(), 1s).push(as_bytes("late"), client::durability::durable));
    // weir-ctl waiting, the daemon stopped by SIGTERM: it says what was left.
    auto waiting = std::async(std::launch::async, [&] { return drain(dir, admin); });
    REQUIRE(eventually([&] { return d.log().find("retiring: pushes are no longer taken") != std::string::npos; }));
    std::this_thread::sleep_for(500ms);
    CHECK(d.stop() == 0);
    const auto cut = waiting.get();
    CHECK(cut.exit_code == 1);
    CHECK(cut.out.find("stopped with 200 records not yet delivered") != std::string::npos);
    CHECK(d.log().find("retiring cut short") != std::string::npos);
    const auto stopped = drain(dir, admin);
    CHECK(stopped.exit_code == 2);
    CHECK(stopped.err.find("its WAB holds 200 records not yet delivered") != std::string::npos);
  }
  // The next start delivers them.
  hook.start();
  daemon_process again(dir.path(), two_sinks(dir, hook, admin));
  REQUIRE(again.wait_ready());
  CHECK(eventually([&] { return hook.accepted_bodies().size() == static_cast<std::size_t>(records); }, 20s));
  CHECK(again.stop() == 0);
}
