// The admin HTTP server of the real daemon: endpoints, a live scrape that
// promtool accepts, a real Prometheus server scraping it with the shipped
// configuration, and the dashboard rendered in headless Chromium.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <regex>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "observability/cluster_metrics.hpp"
#include "observability/metrics.hpp"
#include "observability/delivery_status.hpp"
#include "support/daemon_process.hpp"
#include "support/http_get.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "weir/client.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

struct admin_daemon {
  temp_dir dir;
  std::uint16_t port = free_tcp_port();
  daemon_process d{dir.path(), {"--set", "admin.listen=127.0.0.1:" + std::to_string(port)}};
  admin_daemon() { REQUIRE(d.wait_ready()); }

  void push(int n, client::durability tier = client::durability::durable) {
    auto c = client::connection::connect_unix(d.socket_path());
    for (int i = 0; i < n; ++i) REQUIRE(c.push(as_bytes("observed " + std::to_string(i)), tier).acked);
  }
};

/// Starts a program in the background; killed when this goes out of scope.
struct background {
  pid_t pid = -1;
  explicit background(const std::string& command) {
    const std::string line = "exec " + command;  // made before the fork: the child only execs
    pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      ::execl("/bin/sh", "sh", "-c", line.c_str(), nullptr);
      _exit(127);
    }
  }
  ~background() {
    ::kill(pid, SIGTERM);
    ::waitpid(pid, nullptr, 0);
  }
};

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("admin: healthz readyz status 404 and 405", "[live][admin]") {
  admin_daemon a;
  a.push(5);
  CHECK(http_request(a.port, "/healthz").status == 200);
  const auto ready = http_request(a.port, "/readyz");
  CHECK(ready.status == 200);
  CHECK(ready.body == "ready\n");
  CHECK(http_request(a.port, "/no/such/page").status == 404);
  CHECK(http_request(a.port, "/metrics", "POST").status == 405);
  const auto status = http_request(a.port, "/api/v1/status");
  REQUIRE(status.status == 200);
  const auto j = nlohmann::json::parse(status.body);
  CHECK(j["ready"] == true);
  CHECK(j["shards"].size() == 2);
  // Counted from the directory: a listing taken while the first segment is
  // sealed and deleted and the spare becomes the next may see neither.
  CHECK(eventually([&] {
    const auto s = nlohmann::json::parse(http_request(a.port, "/api/v1/status").body);
    return s["shards"][0]["segments"].get<int>() >= 1;
  }));
  CHECK(j["shards"][0].contains("bytes"));
  CHECK(j["sink"]["type"] == "sqlite");
  for (const char* key : {"1s", "10s", "60s"}) CHECK(j["rates"]["ingest"].contains(key));
  CHECK(j["connections"]["accepted"].get<int>() >= 1);
  REQUIRE(eventually([&] {
    const auto s = nlohmann::json::parse(http_request(a.port, "/api/v1/status").body);
    return s["sink"]["committed_records"].get<int>() == 5;
  }));
  const auto ctl = run_binary(binary("weir-ctl"), {"--admin", "127.0.0.1:" + std::to_string(a.port), "status"}, a.dir.path());
  CHECK(ctl.exit_code == 0);
  CHECK(ctl.out.find("ready") != std::string::npos);
  CHECK(ctl.out.find("sqlite, healthy") != std::string::npos);
  const auto wab = run_binary(binary("weir-ctl"), {"--data-dir", "var", "wab"}, a.dir.path());
  CHECK(wab.exit_code == 0);
  CHECK(wab.out.find("shard_00") != std::string::npos);
  const auto page = http_request(a.port, "/");
  CHECK(page.status == 200);
  CHECK(page.body.find("<canvas") != std::string::npos);
  CHECK(page.body.find("http://") == std::string::npos);  // no external assets
  CHECK(a.d.stop() == 0);
}

TEST_CASE("admin: a live scrape has the catalogue and passes promtool check metrics", "[live][admin][metrics]") {
  admin_daemon a;
  a.push(7);
  a.push(3, client::durability::buffered);
  std::string scrape;
  REQUIRE(eventually([&] {
    scrape = http_request(a.port, "/metrics").body;
    return scrape.find("weir_sink_commit_records_total{outcome=\"committed\",sink=\"default\"} 10") != std::string::npos;
  }));
  for (const char* needle :
       {"weir_records_accepted_total{tier=\"durable\"} 7", "weir_records_ack_total{tier=\"durable\"} 7",
        "weir_records_ack_total{tier=\"buffered\"} 3", "weir_records_nack_total{reason=\"internal_error\",tier=\"durable\"} 0",
        "weir_connections_active", "weir_connection_idle_timeout_total", "weir_wab_bytes", "weir_wab_segments{shard=\"0\"}",
        "weir_wab_fsync_duration_seconds_bucket", "weir_wab_group_commit_records_bucket", "weir_wab_fsync_failures_total",
        "weir_wab_cap_rejections_total", "weir_ack_latency_seconds_bucket{tier=\"durable\"", "weir_drain_lag_records{shard=\"1\",sink=\"default\"}",
        "weir_drain_state{state=\"idle\",sink=\"default\"}", "weir_sink_commit_duration_seconds_bucket", "weir_sink_health{state=\"healthy\",sink=\"default\"} 1",
        "weir_dead_letter_bytes", "weir_recovery_records_replayed_total", "weir_recovery_segments_quarantined_total",
        "weir_delivery_latency_seconds_bucket", "process_resident_memory_bytes", "process_cpu_seconds_total",
        "process_open_fds", "weir_sink_seconds_since_last_commit{sink=\"default\"} ",
        "weir_delivery_oldest_undelivered_age_seconds{shard=\"0\",sink=\"default\"} 0", "weir_delivery_oldest_undelivered_age_seconds{shard=\"1\",sink=\"default\"} 0"})
  {
    INFO(needle);
    CHECK(scrape.find(needle) != std::string::npos);
  }
  std::string out;
  const int rc = run_with_input("promtool check metrics", scrape, out);
  INFO(out);
  CHECK(rc == 0);
  CHECK(a.d.stop() == 0);
}

TEST_CASE("prometheus: the shipped scrape config and alert rules load and the counts arrive", "[live][admin][prometheus]") {
  admin_daemon a;
  a.push(11);
  temp_dir prom;
  const auto deploy = source_dir() / "deploy/prometheus";
  std::string config = replace_all(slurp(deploy / "prometheus.yml"), "127.0.0.1:9185", "127.0.0.1:" + std::to_string(a.port));
  config = replace_all(config, "15s", "1s");
  std::ofstream(prom / "prometheus.yml") << config;
  std::filesystem::copy_file(deploy / "weir-alerts.yml", prom / "weir-alerts.yml");
  const auto web = free_tcp_port();
  background server("prometheus --config.file=" + (prom / "prometheus.yml").string() + " --storage.tsdb.path=" +
                    (prom / "data").string() + " --web.listen-address=127.0.0.1:" + std::to_string(web) +
                    " > " + (prom / "prometheus.log").string() + " 2>&1");
  std::string last;
  const bool found = eventually([&] {
    last = http_request(web, "/api/v1/query?query=weir_records_ack_total%7Btier%3D%22durable%22%7D").body;
    if (last.empty()) return false;
    const auto j = nlohmann::json::parse(last, nullptr, false);
    return !j.is_discarded() && j["status"] == "success" && !j["data"]["result"].empty() &&
           j["data"]["result"][0]["value"][1] == "11";
  }, 60s);
  INFO(last << "\n" << slurp(prom / "prometheus.log"));
  CHECK(found);
  const auto rules = nlohmann::json::parse(http_request(web, "/api/v1/rules").body, nullptr, false);
  REQUIRE_FALSE(rules.is_discarded());
  // Every rule the shipped file holds is loaded.
  const std::string shipped = slurp(deploy / "weir-alerts.yml");
  std::size_t alerts = 0;
  for (auto at = shipped.find("- alert:"); at != std::string::npos; at = shipped.find("- alert:", at + 1)) ++alerts;
  CHECK(alerts == 11);
  CHECK(rules["data"]["groups"][0]["rules"].size() == alerts);
  CHECK(a.d.stop() == 0);
}

TEST_CASE("dashboard: headless Chromium renders live non-zero rates and a screenshot", "[live][admin][dashboard]") {
  admin_daemon a;
  std::atomic<bool> pushing{true};
  std::thread producer([&] {
    auto c = client::connection::connect_unix(a.d.socket_path());
    while (pushing) {
      c.push(as_bytes("for the dashboard"), client::durability::durable);
      std::this_thread::sleep_for(2ms);
    }
  });
  std::this_thread::sleep_for(2500ms);  // a few one-second samples with traffic in them
  temp_dir profile;
  const std::string url = "http://127.0.0.1:" + std::to_string(a.port) + "/";
  std::string dom;
  const int rc = headless_chromium(url, profile.path().string(), dom);
  const auto screenshot = std::filesystem::path(WEIR_BIN_DIR) / "../dashboard.png";
  std::string ignored;
  headless_chromium(url, profile.path().string(), ignored, screenshot.string());
  pushing = false;
  producer.join();
  CHECK(rc == 0);
  std::smatch m;
  REQUIRE(std::regex_search(dom, m, std::regex(R"re(id="ingest-rate">([^<]*)<)re")));
  INFO("ingest rate shown: " << m[1]);
  CHECK(m[1] != "–");
  CHECK(m[1] != "0");
  REQUIRE(std::regex_search(dom, m, std::regex(R"re(id="delivered-rate">([^<]*)<)re")));
  CHECK(m[1] != "–");
  CHECK(dom.find("id=\"sink-health\" class=\"pill ok\">healthy") != std::string::npos);
  CHECK(dom.find("<td>default</td><td>sqlite</td><td>healthy</td>") != std::string::npos);  // the sinks card's row
  // The page came up with the seconds before it was opened: the server keeps them.
  REQUIRE(std::regex_search(dom, m, std::regex(R"re(id="history">([^<]*)<)re")));
  INFO("history shown: " << m[1]);
  CHECK(m[1] != "–");
  const auto history = nlohmann::json::parse(http_request(a.port, "/api/v1/history").body);
  CHECK(history.at("interval_s") == 1);
  CHECK(history.at("t").size() >= 2);
  CHECK(history.at("ingest").size() == history.at("t").size());
  double most = 0;
  for (const auto& v : history.at("ingest")) most = std::max(most, v.get<double>());
  CHECK(most > 0);
  CHECK(std::filesystem::exists(screenshot));
  CHECK(std::filesystem::file_size(screenshot) > 5000);
  CHECK(a.d.stop() == 0);
}

TEST_CASE("cluster metrics: a failover for a peer whose node id is unknown is still shown", "[admin][cluster]") {
  // A survivor restarted while its peer is down never hears the peer's hello,
  // so the member has node id 0; the origin comes from the replica held.
  temp_dir dir;
  metrics exported(dir.path().string(), 1);
  cluster_metrics cluster(1, 2);
  cluster.set_peer("127.0.0.1:7002", 0, peer_state_label::down, -1);
  cluster.set_peer("127.0.0.1:7003", 3, peer_state_label::up, 0.1);
  cluster.set_failover(2, true);
  cluster.replication_ack(true, 5);
  cluster.replication_ack(false, 3);  // a refused batch of three records
  metrics::live_state live;
  live.cluster = &cluster;
  std::string text = exported.render(live);
  CHECK(text.find("weir_failover_active{origin=\"2\"} 1") != std::string::npos);
  CHECK(text.find("weir_failover_active{origin=\"3\"} 0") != std::string::npos);
  CHECK(text.find("weir_replication_acks_total{outcome=\"acked\"} 5") != std::string::npos);
  CHECK(text.find("weir_replication_acks_total{outcome=\"refused\"} 3") != std::string::npos);
  // Once it ends the gauge says 0 instead of vanishing.
  cluster.set_failover(2, false);
  text = exported.render(live);
  CHECK(text.find("weir_failover_active{origin=\"2\"} 0") != std::string::npos);
}

TEST_CASE("delivery status: a sink's error on several lines is kept as one", "[observability]") {
  delivery_status status;
  status.commit_failed("connection to server at \"db\" (10.0.0.5), port 5432 failed: Connection refused\n\tIs the server "
                       "running on that host and accepting TCP/IP connections?\n");
  CHECK(status.last_error() ==
        "connection to server at \"db\" (10.0.0.5), port 5432 failed: Connection refused; \tIs the server running on that "
        "host and accepting TCP/IP connections?");
  status.probe_answered(sink_health::down, "FATAL:  password authentication failed\nDETAIL:  x");
  CHECK(status.last_error() == "FATAL: password authentication failed; DETAIL: x");
}
