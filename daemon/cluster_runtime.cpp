#include "daemon/cluster_runtime.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/publish.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "actors/replica_store.hpp"
#include "config/value_parsing.hpp"
#include "daemon/actor_settings.hpp"
#include "daemon/data_dir.hpp"
#include "daemon/startup_error.hpp"
#include "observability/log.hpp"

namespace weir {

namespace {

bool with_tls(const config& cfg) { return !cfg.cluster.tls.cert.empty(); }

}  // namespace

void prepare_cluster_config(caf::actor_system_config& caf_cfg, const config& cfg) {
  if (cluster_node(cfg) == 0) return;
  caf_cfg.load<caf::io::middleman>();
  caf_cfg.add_message_types<caf::id_block::weir_cluster>();
  if (!with_tls(cfg)) return;
  // All three or none (config validation): CAF falls back to anonymous TLS
  // without a certificate, which would let any node join.
  caf_cfg.load<caf::openssl::manager>();
  caf_cfg.openssl_certificate = cfg.cluster.tls.cert;
  caf_cfg.openssl_key = cfg.cluster.tls.key;
  caf_cfg.openssl_cafile = cfg.cluster.tls.ca;
}

cluster_runtime::cluster_runtime(caf::actor_system& sys, const config& cfg, pipeline& shards, cluster_metrics& stats)
    : sys_(sys) {
  const std::string root = cfg.data_dir + "/replica";
  ensure_private_directory(root, "data_dir");
  store_ = spawn_replica_store(sys, {cluster_node(cfg), root, wab::default_file_io(), cfg.data_dir + "/quarantine"});

  membership_settings ms;
  ms.node = cluster_node(cfg);
  ms.listen = cfg.cluster.listen;
  ms.peers = cfg.cluster.peers;
  ms.heartbeat = std::chrono::milliseconds(cfg.cluster.heartbeat_ms);
  ms.failover_after = std::chrono::milliseconds(cfg.cluster.failover_after_ms);
  ms.middleman = with_tls(cfg) ? sys.openssl_manager().actor_handle() : sys.middleman().actor_handle();
  ms.store = store_;
  ms.replicators = shards.replicators();
  ms.stats = &stats;
  ms.failover.start = [&shards, root](std::uint16_t origin, std::uint16_t shard) {
    shards.start_failover_drain(origin, shard, replica_shard_dir(root, origin, shard));
  };
  ms.failover.stop = [&shards](std::uint16_t origin, std::optional<std::uint16_t> shard) {
    return shards.take_failover_drains(origin, shard);
  };
  membership_ = spawn_membership(sys, ms);

  const auto at = parse_address(cfg.cluster.listen);
  if (!at) throw startup_error("cluster.listen = " + cfg.cluster.listen + ": expected host:port");
  auto published = with_tls(cfg) ? caf::openssl::publish(membership_, at->port, at->host.c_str(), true)
                                 : caf::io::publish(membership_, at->port, at->host.c_str(), true);
  if (!published)
    throw startup_error("cluster.listen = " + cfg.cluster.listen + ": cannot listen there: " +
                        sys.render(published.error()));
  log::info("cluster node listening", {{"node", std::to_string(ms.node)},
                                       {"listen", cfg.cluster.listen},
                                       {"tls", with_tls(cfg) ? "on" : "off"},
                                       {"peers", std::to_string(cfg.cluster.peers.size())},
                                       {"replicas", std::to_string(cfg.cluster.replicas)}});
}

void cluster_runtime::stop() {
  if (!membership_) return;
  caf::scoped_actor self{sys_};
  self->send_exit(membership_, caf::exit_reason::user_shutdown);
  self->wait_for(membership_);
  membership_ = nullptr;
}

cluster_runtime::~cluster_runtime() {
  stop();
  caf::anon_send_exit(store_, caf::exit_reason::user_shutdown);
}

}  // namespace weir
