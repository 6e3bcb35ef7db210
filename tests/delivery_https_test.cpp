// The http sink over TLS, against a real nginx serving certificates made at
// test time by the openssl tool: records arrive when the endpoint's
// certificate verifies; a wrong host name, an unknown CA or an expired
// certificate keeps every acked record in the WAB (retried, never
// dead-lettered), with the reason in the status and on /readyz, and the
// records arrive once the daemon trusts the endpoint; a client certificate
// is presented to an endpoint that asks for one. Every acked record arrives
// across a crash of the endpoint and a kill -9 of the daemon.
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "config/loader.hpp"
#include "sinks/sink.hpp"
#include "support/daemon_process.hpp"
#include "support/http_get.hpp"
#include "support/local_sockets.hpp"
#include "support/nginx_server.hpp"
#include "support/steady_producer.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "support/test_pki.hpp"
#include "weir/client.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

struct https_fixture {
  temp_dir dir;
  test_pki pki{dir / "pki"};
  std::uint16_t admin = free_tcp_port();

  https_fixture() { pki.make_ca("endpoint-ca"); }

  std::vector<std::string> args(const std::string& url, const std::string& ca_file) const {
    return {"--set", "sink.type=http",          "--set", "sink.http.url=" + url,
            "--set", "sink.http.ca_file=" + ca_file, "--set", "sink.retry.initial_ms=50",
            "--set", "sink.retry.max_ms=300",  "--set", "sink.timeout_ms=2000",
            "--set", "admin.listen=127.0.0.1:" + std::to_string(admin)};
  }

  void push(const daemon_process& d, int n, const std::string& prefix) const {
    auto c = client::connection::connect_unix(d.socket_path());
    c.set_timeout(10s);
    for (int i = 0; i < n; ++i) REQUIRE(c.push(as_bytes(prefix + std::to_string(i)), client::durability::durable).acked);
  }

  std::string last_error() const {
    const auto r = http_request(admin, "/api/v1/status");
    return r.status == 200 ? nlohmann::json::parse(r.body)["drain"]["last_error"].get<std::string>() : "";
  }

  std::size_t dead_letters() const {
    std::size_t n = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir / "var" / "dead_letter", ec)) n += e.is_regular_file();
    return n;
  }
};

}  // namespace

TEST_CASE("https: records reach an endpoint whose certificate chains to sink.http.ca_file", "[live][sink][http][tls]") {
  https_fixture f;
  f.pki.make_cert("endpoint", "endpoint-ca", {"IP:127.0.0.1", "DNS:localhost"});
  nginx_server nginx(nginx_tls{f.pki.pem("endpoint"), f.pki.key("endpoint"), ""});
  daemon_process d(f.dir.path(), f.args(nginx.url(), f.pki.pem("endpoint-ca")));
  REQUIRE(d.wait_ready());
  f.push(d, 20, "secure-");
  REQUIRE(eventually([&] { return nginx.logged().size() == 20; }));
  for (const auto& line : nginx.logged()) CHECK(line.rfind("sha256:", 0) == 0);  // the Idempotency-Key
  CHECK(f.dead_letters() == 0);
  CHECK(d.stop() == 0);
}

TEST_CASE("https: every acked record arrives across an endpoint crash and a kill -9 of the daemon",
          "[live][sink][http][tls]") {
  https_fixture f;
  f.pki.make_cert("endpoint", "endpoint-ca", {"IP:127.0.0.1"});
  nginx_server nginx(nginx_tls{f.pki.pem("endpoint"), f.pki.key("endpoint"), ""});
  const auto args = f.args(nginx.url(), f.pki.pem("endpoint-ca"));
  std::vector<std::string> acked;
  {
    daemon_process d(f.dir.path(), args);
    REQUIRE(d.wait_ready());
    // A producer keeps pushing while the endpoint dies mid-delivery, and
    // then the daemon dies too.
    steady_producer producer(d.socket_path(), "crash-");
    REQUIRE(eventually([&] { return nginx.logged().size() >= 100; }));
    nginx.kill();
    REQUIRE(eventually([&] { return d.log().find("sink commit failed; retrying") != std::string::npos; }));
    ::kill(d.pid(), SIGKILL);
    acked = producer.join();
    CHECK(d.wait_exit() == 128 + SIGKILL);
  }
  nginx.start();
  daemon_process again(f.dir.path(), args);
  REQUIRE(again.wait_ready());
  // At least once: a record whose POST was in flight at either crash may come twice.
  auto received = [&] {
    std::set<std::string> bodies;
    for (const auto& line : nginx.logged()) bodies.insert(line.substr(line.find(' ') + 1));
    return bodies;
  };
  REQUIRE(eventually([&] {
    const auto bodies = received();
    return std::all_of(acked.begin(), acked.end(), [&](const std::string& p) { return bodies.count(p) == 1; });
  }, 60s));
  CHECK(acked.size() > 100);
  CHECK(f.dead_letters() == 0);
  CHECK(again.stop() == 0);
}

TEST_CASE("https: a certificate that does not verify keeps the records in the WAB with the reason until it is trusted",
          "[live][sink][http][tls]") {
  https_fixture f;
  f.pki.make_ca("unknown-ca");
  f.pki.make_cert("other-host", "endpoint-ca", {"DNS:other.example"});
  f.pki.make_cert("unknown", "unknown-ca", {"IP:127.0.0.1"});
  f.pki.make_expired_cert("expired", "endpoint-ca", {"IP:127.0.0.1"});
  struct bad_case {
    const char* cert;
    const char* reason;  // OpenSSL's words for it
  };
  int checked = 0;
  for (const bad_case& c : {bad_case{"other-host", "IP address mismatch"},
                            bad_case{"unknown", "unable to get local issuer certificate"},
                            bad_case{"expired", "certificate has expired"}}) {
    INFO(c.cert);
    temp_dir run;
    nginx_server nginx(nginx_tls{f.pki.pem(c.cert), f.pki.key(c.cert), ""});
    {
      daemon_process d(run.path(), f.args(nginx.url(), f.pki.pem("endpoint-ca")));
      REQUIRE(d.wait_ready());
      f.push(d, 3, std::string(c.cert) + "-");
      REQUIRE(eventually([&] { return f.last_error().find(c.reason) != std::string::npos; }));
      CHECK(f.last_error().find("the endpoint's certificate is not trusted") != std::string::npos);
      http_reply ready;
      CHECK(eventually([&] {
        ready = http_request(f.admin, "/readyz");
        return ready.body.find("delivery retrying: ") != std::string::npos;
      }));
      CHECK(ready.status == 200);  // producers can still push
      CHECK(ready.body.find(c.reason) != std::string::npos);
      CHECK(nginx.logged().empty());
      std::error_code ec;
      CHECK_FALSE(std::filesystem::exists(run / "var" / "dead_letter" / "dl_00000001.wab", ec));
      CHECK(d.stop() == 0);
    }
    if (std::string(c.cert) == "unknown") {
      // The operator trusts the endpoint's CA: every record acked before arrives.
      daemon_process d(run.path(), f.args(nginx.url(), f.pki.pem("unknown-ca")));
      REQUIRE(d.wait_ready());
      REQUIRE(eventually([&] { return nginx.logged().size() == 3; }));
      CHECK(d.stop() == 0);
    }
    ++checked;
  }
  CHECK(checked == 3);
}

TEST_CASE("https: a client certificate goes to an endpoint that asks for one", "[live][sink][http][tls]") {
  https_fixture f;
  f.pki.make_cert("endpoint", "endpoint-ca", {"IP:127.0.0.1"});
  f.pki.make_ca("weir-ca");
  f.pki.make_cert("weir-client", "weir-ca");
  nginx_server nginx(nginx_tls{f.pki.pem("endpoint"), f.pki.key("endpoint"), f.pki.pem("weir-ca")});
  auto args = f.args(nginx.url(), f.pki.pem("endpoint-ca"));
  args.insert(args.end(), {"--set", "sink.http.tls.cert=" + f.pki.pem("weir-client"), "--set",
                           "sink.http.tls.key=" + f.pki.key("weir-client")});
  daemon_process d(f.dir.path(), args);
  REQUIRE(d.wait_ready());
  f.push(d, 5, "with-client-cert-");
  REQUIRE(eventually([&] { return nginx.logged().size() == 5; }));
  CHECK(d.stop() == 0);
}

TEST_CASE("https settings that cannot work exit 2 naming the key", "[live][sink][http][tls]") {
  https_fixture f;
  auto r = run_binary(binary("weir-server"),
                      {"--set", "sink.type=http", "--set", "sink.http.url=http://127.0.0.1:1/x", "--set",
                       "sink.http.ca_file=" + f.pki.pem("endpoint-ca"), "--check-config"},
                      f.dir.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("sink.http.ca_file and sink.http.tls.* apply to https:// only") != std::string::npos);
  r = run_binary(binary("weir-server"),
                 {"--set", "sink.type=http", "--set", "sink.http.url=https://127.0.0.1:1/x", "--set",
                  "sink.http.tls.cert=" + f.pki.pem("endpoint-ca"), "--check-config"},
                 f.dir.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("sink.http.tls") != std::string::npos);
  r = run_binary(binary("weir-server"),
                 {"--set", "sink.type=http", "--set", "sink.http.url=https://127.0.0.1:1/x", "--set",
                  "sink.http.ca_file=" + (f.dir / "absent.pem").string(), "--check-config"},
                 f.dir.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("sink.http.ca_file = " + (f.dir / "absent.pem").string()) != std::string::npos);
}

TEST_CASE("https: the sink's probe finds an endpoint gone though TLS left bytes unread on its connection",
          "[live][sink][http][tls]") {
  https_fixture f;
  f.pki.make_cert("endpoint", "endpoint-ca", {"IP:127.0.0.1"});
  nginx_server nginx(nginx_tls{f.pki.pem("endpoint"), f.pki.key("endpoint"), ""});
  config_sources src;
  src.file_required = false;
  src.overrides = {"sink.type=http", "sink.http.url=" + nginx.url(), "sink.http.ca_file=" + f.pki.pem("endpoint-ca")};
  auto sink = make_sink_factory(load_config(src))->make();
  std::string why;
  REQUIRE(sink->probe(why) == sink_health::healthy);
  // Idle, the probes go on using the same connection (TLS 1.3 session
  // tickets unread on it would not make it look stale).
  const auto connected = sockets_connected_to(nginx.port());
  REQUIRE(connected.size() == 1);
  const auto port = local_port(connected.front());
  for (int look = 0; look < 3; ++look) CHECK(sink->probe(why) == sink_health::healthy);
  const auto still = sockets_connected_to(nginx.port());
  REQUIRE(still.size() == 1);
  CHECK(local_port(still.front()) == port);
  // A close_notify from an endpoint that closes politely, then the close.
  nginx.stop_gracefully();
  for (int look = 0; look < 2; ++look) {
    why.clear();
    CHECK(sink->probe(why) == sink_health::down);
    CHECK(why.find("connecting to") != std::string::npos);
  }
  nginx.start();
  REQUIRE(eventually([&] { return sink->probe(why) == sink_health::healthy; }));
}
