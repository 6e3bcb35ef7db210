// What the daemon says about its sink through the three common outages — a
// refused connection, 503s, an endpoint that never answers — seen as an
// operator sees it: /metrics, the status API and the log. The backoff
// sequence itself is checked exactly in the sink runner's actor tests.
#include <signal.h>

#include <chrono>
#include <functional>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/daemon_process.hpp"
#include "support/fake_daemon.hpp"
#include "support/http_get.hpp"
#include "support/http_test_server.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "weir/client.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// The largest value of a family's series (every shard).
double largest(const std::string& scrape, const std::string& family) {
  std::istringstream lines(scrape);
  double most = -1;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(family + "{", 0) == 0) most = std::max(most, std::stod(line.substr(line.rfind(' ') + 1)));
  return most;
}

struct outage {
  std::function<void(http_test_server&)> begin, end;
};

void check_health_through(const outage& o) {
  http_test_server server;
  temp_dir dir;
  const auto admin = free_tcp_port();
  daemon_process d(dir.path(),
                   {"--set", "sink.type=http", "--set", "sink.http.url=" + server.url(), "--set",
                    "sink.retry.initial_ms=50", "--set", "sink.retry.max_ms=400", "--set", "sink.concurrency=2",
                    "--set", "sink.timeout_ms=500", "--set", "sink.health_interval_ms=200", "--set",
                    "sink.down_after_failures=3", "--set", "admin.listen=127.0.0.1:" + std::to_string(admin)});
  REQUIRE(d.wait_ready());
  auto scrape = [&] { return http_request(admin, "/metrics").body; };
  auto status = [&] { return nlohmann::json::parse(http_request(admin, "/api/v1/status").body); };
  auto c = client::connection::connect_unix(d.socket_path());
  REQUIRE(c.push(as_bytes("before"), client::durability::durable).acked);
  REQUIRE(eventually([&] { return server.accepted().size() == 1; }));
  REQUIRE(eventually([&] { return scrape_series(scrape(), "weir_sink_health{state=\"healthy\",sink=\"default\"}") == 1; }));
  REQUIRE(eventually([&] { return largest(scrape(), "weir_delivery_oldest_undelivered_age_seconds") == 0; }));

  o.begin(server);
  REQUIRE(c.push(as_bytes("during"), client::durability::durable).acked);
  // Degraded from the first failed attempt, down after the third in a row
  // (or at once, when a health probe finds the endpoint gone before the
  // record's first attempt: on busy cores that comes first).
  REQUIRE(eventually([&] { return scrape_series(scrape(), "weir_sink_health{state=\"down\",sink=\"default\"}") == 1; }, 20s));
  CHECK(eventually([&] { return d.log().find("failures=1 health=") != std::string::npos; }, 20s));
  CHECK(d.log().find("sink commit failed; retrying") != std::string::npos);
  CHECK(d.log().find("sink down") != std::string::npos);
  // The waiting record ages, and so does the last commit.
  REQUIRE(eventually([&] { return largest(scrape(), "weir_delivery_oldest_undelivered_age_seconds") > 0.5; }, 20s));
  CHECK(scrape_series(scrape(), "weir_sink_seconds_since_last_commit{sink=\"default\"}") > 0.5);
  const auto during = status();
  CHECK(during["sink"]["health"] == "down");
  CHECK(!during["drain"]["last_error"].get<std::string>().empty());
  CHECK(during["drain"]["oldest_undelivered_age_s"].get<double>() > 0.5);

  o.end(server);
  REQUIRE(eventually([&] { return server.accepted().size() == 2; }, 20s));
  REQUIRE(eventually([&] { return scrape_series(scrape(), "weir_sink_health{state=\"healthy\",sink=\"default\"}") == 1; }));
  REQUIRE(eventually([&] { return d.log().find("sink healthy again") != std::string::npos; }));
  CHECK(d.log().find("records_waiting=") != std::string::npos);
  REQUIRE(eventually([&] { return largest(scrape(), "weir_delivery_oldest_undelivered_age_seconds") == 0; }));
  CHECK(scrape_series(scrape(), "weir_sink_seconds_since_last_commit{sink=\"default\"}") < 5);
  const auto after = status();
  CHECK(after["drain"]["last_error"] == "");
  CHECK(after["drain"]["oldest_undelivered_age_s"] == 0);
  CHECK(d.stop() == 0);
}

http_answer fine(const http_request_seen&, std::size_t) { return {}; }

}  // namespace

TEST_CASE("sink health: a refused connection is degraded then down and healthy once the endpoint is back",
          "[live][sink][health]") {
  check_health_through({[](http_test_server& s) { s.stop(); }, [](http_test_server& s) { s.start(); }});
}

TEST_CASE("sink health: 503s are degraded then down and healthy once the endpoint answers 200",
          "[live][sink][health]") {
  check_health_through({[](http_test_server& s) {
                          s.set_rule([](const http_request_seen&, std::size_t) { return http_answer{503}; });
                        },
                        [](http_test_server& s) { s.set_rule(fine); }});
}

TEST_CASE("sink health: an endpoint that never answers is degraded then down and healthy once it answers",
          "[live][sink][health]") {
  check_health_through({[](http_test_server& s) {
                          s.set_rule([](const http_request_seen&, std::size_t) {
                            http_answer hung;
                            hung.delay = 3s;  // past sink.timeout_ms
                            return hung;
                          });
                        },
                        [](http_test_server& s) { s.set_rule(fine); }});
}

TEST_CASE("a sink request its endpoint never answers does not hold the stop past its last resort",
          "[live][sink][http]") {
  temp_dir dir;
  silent_tcp_listener mute;  // connections complete into its backlog; nothing is ever read or answered
  const auto admin = free_tcp_port();
  daemon_process d(dir.path(), {"--set", "sink.type=http", "--set",
                                "sink.http.url=http://127.0.0.1:" + std::to_string(mute.port()) + "/in",
                                "--set", "sink.timeout_ms=600000", "--set", "admin.listen=127.0.0.1:" + std::to_string(admin)});
  REQUIRE(d.wait_ready());
  auto c = client::connection::connect_unix(d.socket_path());
  REQUIRE(c.push(as_bytes("never answered"), client::durability::durable).acked);
  // A commit is on its way and will wait for its answer for ten minutes.
  REQUIRE(eventually([&] {
    return scrape_series(http_request(admin, "/metrics").body, "weir_drain_state{state=\"delivering\",sink=\"default\"}") == 1;
  }));
  const auto asked = std::chrono::steady_clock::now();
  ::kill(d.pid(), SIGTERM);
  const int rc = d.wait_exit(std::chrono::seconds(60));
  INFO(d.log());
  CHECK(rc == 0);
  CHECK(std::chrono::steady_clock::now() - asked < std::chrono::seconds(40));  // not the ten minutes
  CHECK(d.log().find("exiting anyway") != std::string::npos);
}
