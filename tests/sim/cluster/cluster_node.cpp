#include "sim/cluster/cluster_node.hpp"

#include <filesystem>
#include <set>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/io/middleman_actor.hpp>
#include <caf/send.hpp>

#include "runtime/actor_settings.hpp"
#include "runtime/pipeline.hpp"
#include "runtime/node_life.hpp"
#include "runtime/wab_startup.hpp"
#include "sim/cluster/sim_network.hpp"
#include "wab/segment_format.hpp"

namespace weir::sim {

void node_disk::fresh(sim_rng rng) {
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
  io.reset();  // before the plan it refers to changes
  plan = fault_plan{};
  io = std::make_shared<sim_file_io>(plan, rng);
  incarnation = 0;
}

namespace {

/// The node's dialer: membership's middleman, calling through the network.
caf::behavior dialer(caf::event_based_actor*, sim_network* net, std::uint16_t node) {
  return {[net, node](caf::connect_atom, const std::string& host,
                      std::uint16_t port) -> caf::result<caf::node_id, caf::strong_actor_ptr, std::set<std::string>> {
    auto there = net->dial(node, host + ":" + std::to_string(port));
    if (!there) return caf::make_error(caf::sec::cannot_connect_to_node);
    const auto id = there->node();
    return {id, std::move(there), std::set<std::string>{}};
  }};
}

}  // namespace

cluster_node_life::cluster_node_life(caf::actor_system& sys, const config& cfg, node_disk& disk, sim_network& net,
                                     const caf::actor& identity, std::shared_ptr<sink_factory> sink,
                                     reply_observer* replies, const std::vector<std::size_t>& producers,
                                     std::uint64_t first_if_empty, sim_rng& rng) {
  // The directories the daemon makes at startup, outside the file I/O seam.
  std::vector<std::string> dirs{cfg.data_dir, cfg.data_dir + "/wab", cfg.data_dir + "/quarantine",
                                cfg.data_dir + "/dead_letter", cfg.data_dir + "/replica"};
  for (std::int64_t s = 0; s < cfg.ingest.shards; ++s)
    dirs.push_back(cfg.data_dir + "/wab/" + wab::shard_dir_name(static_cast<std::uint16_t>(s)));
  for (const auto& d : dirs) {
    std::filesystem::create_directories(d);
    disk.io->adopt_directory(d);
  }
  auto recovered = recover_wab(cfg, disk.io.get());
  // As runtime/node_life.cpp, with the caller's clock.
  const bool empty = number_empty_shards(recovered, cfg.ingest.shards, first_if_empty);
  if (disk.incarnation == 0) disk.incarnation = rng.next() | 1;
  new_life_ = empty;
  incarnation_ = recovered.incarnation = disk.incarnation;

  auto usage = std::make_shared<wab::wab_usage>(static_cast<std::uint64_t>(cfg.limits.wab_max_bytes));
  usage->add(recovered.bytes);
  pipeline_ = std::make_unique<pipeline>(sys, cfg, recovered, disk.io, usage, nullptr, nullptr,
                                         pipeline_seams{std::move(sink), actor_thread::scheduler});
  auto rs = replica_store_settings_for(cfg, *pipeline_, disk.io);
  rs.thread = actor_thread::scheduler;
  store_ = spawn_replica_store(sys, std::move(rs));
  const auto node = static_cast<std::uint16_t>(cfg.cluster.node_id);
  dialer_ = sys.spawn(dialer, &net, node);
  auto ms = membership_settings_for(cfg, *pipeline_, store_, incarnation_);
  ms.middleman = caf::actor_cast<caf::io::middleman_actor>(dialer_);
  ms.identity = identity;
  membership_ = spawn_membership(sys, std::move(ms));
  net.publish(node, cfg.cluster.listen, caf::actor_cast<caf::actor>(membership_));
  for (auto p : producers) {
    auto c = std::make_shared<sim_connection>(replies, p);
    producers_.push_back({p, sys.spawn<producer_actor>(c), c});
  }
}

const cluster_node_life::producer_end* cluster_node_life::find_producer(std::size_t p) const {
  for (const auto& end : producers_)
    if (end.index == p) return &end;
  return nullptr;
}

caf::actor cluster_node_life::producer(std::size_t p) const {
  const auto* end = find_producer(p);
  return end ? end->actor : nullptr;
}

sim_connection* cluster_node_life::connection(std::size_t p) const {
  const auto* end = find_producer(p);
  return end ? end->connection.get() : nullptr;
}

std::uint64_t cluster_node_life::stray_replies() const {
  std::uint64_t n = 0;
  for (const auto& end : producers_) n += end.connection->stray_replies();
  return n;
}

void cluster_node_life::kill() {
  if (killed_) return;
  killed_ = true;
  for (const auto& end : producers_) caf::anon_send_exit(end.actor, caf::exit_reason::kill);
  caf::anon_send_exit(membership_, caf::exit_reason::kill);
  caf::anon_send_exit(store_, caf::exit_reason::kill);
  caf::anon_send_exit(dialer_, caf::exit_reason::kill);
}

// The pipeline's actors are told to exit only now, once membership and the
// store (whose hooks call into the pipeline) have had their exits run.
cluster_node_life::~cluster_node_life() {
  kill();
  pipeline_.reset();
}

}  // namespace weir::sim
