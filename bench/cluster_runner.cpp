#include "bench/cluster_runner.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "bench/watchdog.hpp"
#include "weir/admin_http.hpp"

namespace weir::bench {

namespace {

/// weir_cluster_peers{state="up"} in the node's scrape; 0 when it does not answer.
int peers_up(const std::string& admin) {
  try {
    const auto body = client::admin_get(admin, "/metrics").body;
    const std::string key = "weir_cluster_peers{state=\"up\"} ";
    const auto at = body.find(key);
    return at == std::string::npos ? 0 : std::stoi(body.substr(at + key.size()));
  } catch (const std::exception&) {
    return 0;
  }
}

/// A private CA and nodes 1..n's certificates under `dir`, made by the
/// weir-ctl beside `server_binary` (as docs/cluster.md says).
void make_certificates(const std::string& server_binary, const std::string& dir, int nodes) {
  const auto ctl = std::filesystem::path(server_binary).parent_path() / "weir-ctl";
  const std::string command = "'" + ctl.string() + "' cluster certs --out '" + dir + "' --nodes 1-" +
                              std::to_string(nodes) + " >/dev/null";
  if (std::system(command.c_str()) != 0)
    throw std::runtime_error("cannot make the cluster's certificates: " + command);
}

}  // namespace

cluster_runner::cluster_runner(const std::string& server_binary, const std::string& workdir,
                               const std::map<std::string, std::string>& settings, int nodes, int replicas) {
  // The ports are free when picked, not reserved: another program (a test
  // running beside) may take one first, and that node then cannot start.
  // A few tries with fresh ports.
  for (int attempt = 1;; ++attempt) {
    try {
      note_step("starting a " + std::to_string(nodes) + "-node cluster, attempt " + std::to_string(attempt));
      start(server_binary, workdir + "/try" + std::to_string(attempt), settings, nodes, replicas);
      return;
    } catch (const std::exception& e) {
      if (attempt == 3) throw;
      std::fprintf(stderr, "weir-bench: cluster attempt %d: %s; trying again\n", attempt, e.what());
      nodes_.clear();  // each stops its node
    }
  }
}

void cluster_runner::start(const std::string& server_binary, const std::string& workdir,
                           const std::map<std::string, std::string>& settings, int nodes, int replicas) {
  std::vector<std::string> listen;
  for (int i = 0; i < nodes; ++i) listen.push_back("127.0.0.1:" + std::to_string(unused_loopback_port()));
  const std::string certs = workdir + "/certs";
  make_certificates(server_binary, certs, nodes);
  for (int i = 0; i < nodes; ++i) {
    const std::string dir = workdir + "/node" + std::to_string(i + 1);
    std::filesystem::create_directories(dir);
    std::string peers;
    for (int j = 0; j < nodes; ++j)
      if (j != i) peers += (peers.empty() ? "" : ",") + listen[static_cast<std::size_t>(j)];
    auto s = settings;
    s["cluster.node_id"] = std::to_string(i + 1);
    s["cluster.listen"] = listen[static_cast<std::size_t>(i)];
    s["cluster.peers"] = "[" + peers + "]";
    s["cluster.replicas"] = std::to_string(replicas);
    s["cluster.tls.cert"] = certs + "/node" + std::to_string(i + 1) + ".pem";
    s["cluster.tls.key"] = certs + "/node" + std::to_string(i + 1) + ".key";
    s["cluster.tls.ca"] = certs + "/ca.pem";
    nodes_.push_back(std::make_unique<daemon_runner>(server_binary, dir, s));
  }
  note_step("waiting for the cluster's first node to see its peers up (" + workdir + ")");
  const auto started = std::chrono::steady_clock::now();
  while (peers_up(first().admin_address()) < nodes - 1) {
    if (std::chrono::steady_clock::now() - started > std::chrono::seconds(30))
      throw std::runtime_error("the cluster's first node did not see its peers up within 30 s (" + workdir + ")");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void cluster_runner::stop() {
  note_step("stopping the cluster's nodes");
  for (auto& n : nodes_) n->stop();
}

}  // namespace weir::bench
