#include "daemon/cluster_runtime.hpp"

#include <algorithm>
#include <set>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "actors/cluster_dialer.hpp"
#include "actors/replica_store.hpp"
#include "config/value_parsing.hpp"
#include "runtime/actor_settings.hpp"
#include "transport/cluster_bridge.hpp"
#include "transport/cluster_gate.hpp"
#include "transport/cluster_tls.hpp"
#include "runtime/data_dir.hpp"
#include "runtime/startup_error.hpp"
#include "observability/log.hpp"

namespace weir {

void prepare_cluster_config(caf::actor_system_config& caf_cfg, const config& cfg) {
  if (cluster_node(cfg) == 0) return;
  caf_cfg.load<caf::io::middleman>();
  caf_cfg.add_message_types<caf::id_block::weir_cluster>();
}

cluster_runtime::cluster_runtime(caf::actor_system& sys, const config& cfg, pipeline& shards, cluster_metrics& stats,
                                 std::uint64_t incarnation)
    : sys_(sys) {
  std::shared_ptr<boost::asio::ssl::context> tls;
  try {
    tls = make_cluster_tls_context(cfg);
  } catch (const std::exception& e) {
    throw startup_error(e.what());
  }
  ensure_private_directory(cfg.data_dir + "/replica", "data_dir");
  store_ = spawn_replica_store(sys, replica_store_settings_for(cfg, shards, wab::default_file_io()));
  membership_settings ms = membership_settings_for(cfg, shards, store_, incarnation);
  ms.stats = &stats;
  try {
    join(sys, cfg, std::move(tls), ms, stats);
  } catch (...) {
    stop();
    throw;
  }
}

void cluster_runtime::join(caf::actor_system& sys, const config& cfg, std::shared_ptr<boost::asio::ssl::context> tls,
                           membership_settings ms, cluster_metrics& stats) {
  bridge_ = std::make_unique<cluster_bridge>(sys);
  cluster_gate_options go;
  go.node = ms.node;
  go.listen = cfg.cluster.listen;
  go.handshake_timeout = std::chrono::milliseconds(cfg.cluster.handshake_timeout_ms);
  go.max_pending = static_cast<std::size_t>(cfg.cluster.max_pending_handshakes);
  go.max_message_bytes = static_cast<std::uint32_t>(cfg.cluster.max_message_bytes);
  gate_ = std::make_shared<cluster_gate>(go, std::move(tls), *bridge_, stats.links);
  gate_->open();
  std::weak_ptr<cluster_gate> gate = gate_;  // a message still queued must not reach a gate gone
  dialer_ = spawn_cluster_dialer(
      sys,
      [gate](const std::string& host, std::uint16_t port, std::function<void(std::string, std::string)> done) {
        if (auto g = gate.lock()) g->dial(host, port, std::move(done));
        else done("", "the node is stopping");
      },
      bridge_->middleman());
  ms.middleman = caf::actor_cast<caf::io::middleman_actor>(dialer_);
  ms.identity = bridge_->broker();
  ms.members = [gate](std::set<std::uint16_t> nodes) {
    if (auto g = gate.lock()) g->members(std::move(nodes));
  };
  membership_ = spawn_membership(sys, ms);
  // What peers may address: membership, and the replicators (answers to their requests).
  std::set<std::uint64_t> replicators;
  for (const auto& r : ms.replicators) replicators.insert(r.id());
  gate_->reachable(membership_.id(), std::move(replicators));
  if (auto why = bridge_->publish(caf::actor_cast<caf::actor>(membership_)); !why.empty())
    throw startup_error("cluster.listen = " + cfg.cluster.listen + ": cannot publish the cluster actor: " + why);
  gate_->start();
  log::info("cluster node listening", {{"node", std::to_string(ms.node)},
                                       {"listen", cfg.cluster.listen},
                                       {"certificate", node_certificate_name(ms.node)},
                                       {"peers", std::to_string(cfg.cluster.peers.size())},
                                       {"replicas", std::to_string(cfg.cluster.replicas)}});
}

std::string cluster_runtime::reload_tls(const config& cfg) {
  try {
    gate_->use(make_cluster_tls_context(cfg));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

void cluster_runtime::stop() {
  if (membership_) {
    caf::scoped_actor self{sys_};
    self->send_exit(membership_, caf::exit_reason::user_shutdown);
    self->wait_for(membership_);
    membership_ = nullptr;
  }
  if (dialer_) caf::anon_send_exit(dialer_, caf::exit_reason::user_shutdown);
  dialer_ = nullptr;
  if (gate_) gate_->stop();
  if (bridge_) bridge_->stop();
  // The store calls into the pipeline (retired copies): it ends before it.
  if (store_) {
    caf::scoped_actor self{sys_};
    self->send_exit(store_, caf::exit_reason::user_shutdown);
    self->wait_for(store_);
    store_ = nullptr;
  }
}

cluster_runtime::~cluster_runtime() { stop(); }

}  // namespace weir
