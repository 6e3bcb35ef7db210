#pragma once
// Three real weir-server processes on loopback ports, each with its own data
// directory and its own node certificate (made with weir-ctl cluster certs,
// as docs/cluster.md says), all delivering into one SQLite file.
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support/daemon_process.hpp"
#include "support/http_get.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "weir/client.hpp"

namespace weir::test {

struct cluster3 {
  temp_dir root;
  std::array<std::uint16_t, 3> ports{free_tcp_port(), free_tcp_port(), free_tcp_port()};
  std::array<std::uint16_t, 3> admin{free_tcp_port(), free_tcp_port(), free_tcp_port()};
  std::array<std::unique_ptr<daemon_process>, 3> nodes;
  int replicas;

  /// The CA and node certificates 1 to 4, made as docs/cluster.md says.
  explicit cluster3(int replicas_ = 2);

  std::filesystem::path certs() const { return root / "certs"; }
  /// The --set arguments that give a node node `id`'s certificate.
  std::vector<std::string> certificate_of(int id) const {
    const auto base = (certs() / ("node" + std::to_string(id))).string();
    return {"--set", "cluster.tls.cert=" + base + ".pem", "--set", "cluster.tls.key=" + base + ".key",
            "--set", "cluster.tls.ca=" + (certs() / "ca.pem").string()};
  }

  std::string listen(int i) const { return "127.0.0.1:" + std::to_string(ports[i]); }
  std::filesystem::path dir(int i) const;
  std::string sink() const { return (root / "sink.db").string(); }

  /// Starts node i (0-based; node id i + 1); `extra` overrides.
  void start(int i, std::vector<std::string> extra = {}) {
    launch(i, std::move(extra));
    REQUIRE(nodes[i]->wait_ready());
  }

  /// Starts node i without waiting for it to be ready.
  void launch(int i, std::vector<std::string> extra = {}) {
    std::filesystem::create_directories(dir(i));
    std::string peers;
    for (int j = 0; j < 3; ++j)
      if (j != i) peers.append(peers.empty() ? "" : ",").append(listen(j));
    std::vector<std::string> args{"--set", "sink.type=sqlite", "--set", "sink.sqlite.path=" + sink(),
                                  "--set", "cluster.node_id=" + std::to_string(i + 1),
                                  "--set", "cluster.listen=" + listen(i),
                                  "--set", "cluster.peers=[" + peers + "]",
                                  "--set", "cluster.replicas=" + std::to_string(replicas),
                                  "--set", "cluster.heartbeat_ms=100",
                                  "--set", "cluster.failover_after_ms=1000",
                                  "--set", "cluster.replication_timeout_ms=1500",
                                  // three nodes share one SQLite file: a busy database is retried
                                  // soon, not after a backoff grown to half a minute
                                  "--set", "sink.retry.max_ms=1000",
                                  "--set", "admin.listen=127.0.0.1:" + std::to_string(admin[i])};
    const auto tls = certificate_of(i + 1);
    args.insert(args.end(), tls.begin(), tls.end());
    args.insert(args.end(), extra.begin(), extra.end());
    nodes[i].reset();
    nodes[i] = std::make_unique<daemon_process>(dir(i), args);
  }

  void start_all(std::vector<std::string> first_extra = {}) {
    for (int i = 0; i < 3; ++i) start(i, i == 0 ? first_extra : std::vector<std::string>{});
    // Every node sees both peers up (its log says so once per peer).
    REQUIRE(eventually([&] {
      for (const auto& n : nodes)
        if (count(n->log(), "cluster peer connected") < 2) return false;
      return true;
    }));
  }

  client::connection connect(int i) { return client::connection::connect_unix(nodes[i]->socket_path()); }

  std::string scrape(int i) const { return http_request(admin[i], "/metrics").body; }
  double series(int i, const std::string& name) const { return scrape_series(scrape(i), name); }

  /// `weir-ctl cluster status` against node i's admin server.
  run_result ctl_cluster_status(int i) const {
    return run_binary(binary("weir-ctl"), {"--admin", "127.0.0.1:" + std::to_string(admin[i]), "cluster", "status"},
                      root.path());
  }

  static std::size_t count(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
  }
};

/// Payloads in the sink, with how often each appears (duplicates collapse on the key).
std::map<std::string, int> sink_payloads(const std::string& path);
/// The acked payloads the sink lacks, the first few, for a failure's message.
std::string missing(const std::string& path, const std::set<std::string>& acked);
bool sink_holds_all(const std::string& path, const std::set<std::string>& acked);

}  // namespace weir::test
