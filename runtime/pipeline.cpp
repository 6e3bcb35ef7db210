#include "runtime/pipeline.hpp"

#include <cstring>
#include <filesystem>
#include <limits>

#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "actors/drain/damage_claims.hpp"
#include "actors/drain/segment_release.hpp"
#include "actors/replicator.hpp"
#include "actors/segment_preparer.hpp"
#include "config/credentials.hpp"
#include "config/sink_list.hpp"
#include "runtime/actor_settings.hpp"
#include "messages/atoms.hpp"
#include "observability/log.hpp"
#include "runtime/data_dir.hpp"
#include "runtime/startup_error.hpp"
#include "wab/segment_format.hpp"
#include "sinks/sink.hpp"

namespace weir {

namespace {

std::chrono::milliseconds time_left(std::chrono::steady_clock::time_point deadline) {
  return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()),
                  std::chrono::milliseconds(0));
}

/// Asks each actor to finish and waits for every done_atom, within `deadline`.
template <class Actor>
bool stop_all(caf::scoped_actor& self, const std::vector<Actor>& actors,
              std::chrono::steady_clock::time_point deadline) {
  for (auto& a : actors) self->send(a, shutdown_atom::value);
  for (std::size_t i = 0; i < actors.size(); ++i) {
    bool in_time = true;
    const auto left = time_left(deadline);
    self->receive([](done_atom) {}, caf::after(left) >> [&] { in_time = false; });
    if (!in_time) return false;
  }
  return true;
}

}  // namespace

pipeline::pipeline(caf::actor_system& sys, const config& cfg, const wab_startup& recovered,
                   std::shared_ptr<wab::file_io> io, std::shared_ptr<wab::wab_usage> usage, metrics* stats,
                   cluster_metrics* cluster_stats, pipeline_seams seams)
    : sys_(sys) {
  start_sinks(cfg, io, stats, seams);
  failover_template_ = drain_settings_for(cfg, 0, "", 1);
  failover_template_.io = io;
  failover_template_.quarantine_dir = cfg.data_dir + "/quarantine";
  failover_template_.thread = seams.thread;

  const auto configured = configured_sinks(cfg);
  for (std::int64_t i = 0; i < cfg.ingest.shards; ++i) {
    const auto shard = static_cast<std::uint16_t>(i);
    const std::string dir = cfg.data_dir + "/wab/" + wab::shard_dir_name(shard);
    auto seq = recovered.next_sequence.find(shard);
    const std::uint64_t first_sequence = seq == recovered.next_sequence.end() ? 1 : seq->second;

    shard_metrics* shard_stats = stats ? &stats->shard(shard) : nullptr;
    auto spares = spare_pool_for(cfg, dir, io);
    if (int rc = spares->adopt(); rc < 0)
      log::warn("cannot read the spare WAB segments left by an earlier run", {{"dir", dir}, {"error", std::strerror(-rc)}});
    if (cluster_node(cfg) != 0) {
      auto rs = replicator_settings_for(cfg, shard, dir);
      rs.incarnation = recovered.incarnation;
      rs.io = io;
      rs.stats = cluster_stats;
      rs.thread = seams.thread;
      replicators_.push_back(spawn_replicator(sys, rs));
    }
    auto ws = writer_settings_for(cfg, shard, dir, first_sequence);
    const auto release = std::make_shared<drain_parts::segment_release>(sinks_.size(), usage);
    const auto damage = std::make_shared<drain_parts::damage_claims>();
    for (std::size_t k = 0; k < sinks_.size(); ++k) {
      auto ds = drain_settings_for(with_only_sink(cfg, configured[k]), shard, dir, first_sequence);
      ds.sink = sinks_[k].name;
      ds.sink_index = k;
      ds.release = release;
      ds.damage_claims = damage;
      ds.io = io;
      ds.usage = usage;
      ds.spares = spares;
      ds.quarantine_dir = cfg.data_dir + "/quarantine";
      ds.stats = shard_stats;
      ds.progress = stats ? &stats->delivery(k, shard) : nullptr;
      ds.notice = std::make_shared<append_notice>();
      ds.thread = seams.thread;
      if (auto r = recovered.segment_records.find(shard); r != recovered.segment_records.end())
        ds.recovered_records = r->second;
      if (auto q = recovered.damaged_at_startup.find(shard); q != recovered.damaged_at_startup.end())
        ds.damaged_at_startup = q->second;
      if (!replicators_.empty()) ds.confirmed = caf::actor_cast<confirm_listener_actor>(replicators_.back());
      drains_.push_back(spawn_drain(sys, ds, sinks_[k].runner));
      ws.drains.push_back({drains_.back(), ds.notice});
    }
    ws.io = io;
    ws.usage = usage;
    ws.spares = spares;
    if (spares->keep() > 0) {
      preparers_.push_back(spawn_segment_preparer(sys, {spares, seams.thread}));
      ws.preparer = preparers_.back();
    }
    ws.stats = shard_stats;
    ws.buffered = buffered_;
    ws.thread = seams.thread;
    auto fs = fsync_settings_for(cfg, shard);
    fs.stats = shard_stats;
    fs.thread = seams.thread;
    if (ws.may_sync) fs.load = ws.sync_load = std::make_shared<sync_load>();
    if (!replicators_.empty()) {
      ws.replicator = replicators_.back();
      ws.replication = fs.replication = {replicators_.back(), std::chrono::milliseconds(cfg.cluster.replication_timeout_ms)};
    }
    writers_.push_back(spawn_shard_writer(sys, std::move(ws), spawn_fsync_group(sys, fs)));
  }
}

pipeline::~pipeline() {
  for (auto& w : writers_) caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  for (auto& d : drains_) caf::anon_send_exit(d, caf::exit_reason::user_shutdown);
  for (auto& p : preparers_) caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
  for (auto& r : replicators_) caf::anon_send_exit(r, caf::exit_reason::user_shutdown);
  std::lock_guard<std::mutex> guard(failover_mutex_);
  for (auto& [key, d] : failover_drains_) caf::anon_send_exit(d, caf::exit_reason::user_shutdown);
  for (auto& [dir, d] : retired_drains_) caf::anon_send_exit(d, caf::exit_reason::user_shutdown);
  for (auto& lane : sinks_)
    if (lane.runner) caf::anon_send_exit(lane.runner, caf::exit_reason::user_shutdown);
}

namespace {

/// Where a sink delivers, said at start: a relative file path is resolved
/// against the working directory (under systemd, the unit's), which is
/// worth seeing once.
void log_sink(const sink_config& sink, const std::string& type) {
  std::string target;
  std::error_code ec;
  if (type == "sqlite") target = std::filesystem::absolute(sink.sqlite.path, ec).string();
  else if (type == "file") target = std::filesystem::absolute(sink.file.path, ec).string();
  else if (type == "http") target = sink.http.url;
  else if (type == "clickhouse") target = sink.clickhouse.url;
  log::info("sink", {{"sink", sink.name}, {"type", type}, {"target", target.empty() ? "-" : redact_credentials(target)}});
}

}  // namespace

void pipeline::start_sinks(const config& cfg, std::shared_ptr<wab::file_io> io, metrics* stats, pipeline_seams& seams) {
  for (const auto& sink : configured_sinks(cfg)) {
    const config as_only = with_only_sink(cfg, sink);
    sink_lane lane;
    lane.name = sink.name;
    try {
      lane.factory = sinks_.empty() && seams.sink ? seams.sink : make_sink_factory(as_only);
    } catch (const std::exception& e) {
      throw startup_error(sinks_.empty() && cfg.sinks.empty() ? e.what() : "sink " + sink.name + ": " + e.what());
    }
    lane.type = lane.factory->type();
    log_sink(sink, lane.type);
    const std::string dir = cfg.data_dir + "/" + dead_letter_dir_name(sink.name);
    ensure_private_directory(dir, "data_dir");
    lane.dead_letters =
        std::make_shared<dead_letter_store>(io, dir, static_cast<std::uint64_t>(cfg.drain.dead_letter_max_bytes));
    lane.batches_in_flight = drain_settings_for(as_only, 0, "", 1).max_in_flight;
    auto rs = runner_settings_for(as_only, lane.factory->one_writer());
    rs.stats = stats;
    rs.sink_index = sinks_.size();
    rs.sink_name = sink.name;
    rs.worker_thread = seams.thread;
    lane.runner = spawn_sink_runner(sys_, rs, lane.factory, lane.dead_letters, lane.delivery);
    sinks_.push_back(std::move(lane));
  }
}

sink_factory::secret_reload pipeline::reload_sink_secrets() {
  sink_factory::secret_reload all;
  for (auto& lane : sinks_) {
    auto one = lane.factory->reload_secrets();
    const std::string prefix = sinks_.size() > 1 ? lane.name + ": " : "";
    for (auto& r : one.reloaded) all.reloaded.push_back(prefix + r);
    for (auto& f : one.failed) all.failed.push_back(prefix + f);
  }
  return all;
}

std::vector<drain_actor> pipeline::spawn_copy_drains(std::uint16_t origin, std::uint16_t shard, const std::string& dir) {
  auto ds = failover_template_;
  ds.shard = shard;
  ds.shard_dir = dir;
  ds.node = origin;
  ds.segment_prefix = segment_prefix_of(origin);
  ds.first_live_sequence = std::numeric_limits<std::uint64_t>::max();  // nothing more is written to it
  ds.usage = std::make_shared<wab::wab_usage>(std::numeric_limits<std::uint64_t>::max());
  ds.release = std::make_shared<drain_parts::segment_release>(sinks_.size(), ds.usage);
  ds.damage_claims = std::make_shared<drain_parts::damage_claims>();
  std::vector<drain_actor> drains;
  for (std::size_t k = 0; k < sinks_.size(); ++k) {
    ds.sink = sinks_[k].name;
    ds.sink_index = k;
    ds.max_in_flight = sinks_[k].batches_in_flight;
    drains.push_back(spawn_drain(sys_, ds, sinks_[k].runner));
  }
  return drains;
}

void pipeline::start_failover_drain(std::uint16_t origin, std::uint16_t shard, const std::string& replica_dir) {
  auto drains = spawn_copy_drains(origin, shard, replica_dir);
  std::lock_guard<std::mutex> guard(failover_mutex_);
  for (auto& d : drains) failover_drains_.emplace(std::make_pair(origin, shard), d);
}

void pipeline::start_retired_drain(std::uint16_t origin, std::uint16_t shard, const std::string& dir) {
  auto drains = spawn_copy_drains(origin, shard, dir);
  std::lock_guard<std::mutex> guard(failover_mutex_);
  stop_retired_drain_locked(dir);
  for (auto& d : drains) retired_drains_.emplace(dir, d);
}

void pipeline::stop_retired_drain(const std::string& dir) {
  std::lock_guard<std::mutex> guard(failover_mutex_);
  stop_retired_drain_locked(dir);
}

void pipeline::stop_retired_drain_locked(const std::string& dir) {
  const auto [from, to] = retired_drains_.equal_range(dir);
  for (auto it = from; it != to; ++it) caf::anon_send_exit(it->second, caf::exit_reason::user_shutdown);
  retired_drains_.erase(from, to);
}

std::vector<drain_actor> pipeline::take_failover_drains(std::uint16_t origin, std::optional<std::uint16_t> shard) {
  std::lock_guard<std::mutex> guard(failover_mutex_);
  std::vector<drain_actor> taken;
  for (auto it = failover_drains_.begin(); it != failover_drains_.end();) {
    if (it->first.first != origin || (shard && it->first.second != *shard)) {
      ++it;
      continue;
    }
    taken.push_back(it->second);
    it = failover_drains_.erase(it);
  }
  return taken;
}

bool pipeline::wait_started(std::chrono::milliseconds timeout) {
  caf::scoped_actor self{sys_};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // A start that takes long (a stalled disk) is said early, so the log of a
  // daemon that is not ready yet tells where it waits. At most two questions
  // per writer: one that failed at once (a writer gone) is not asked again.
  const auto patience = std::chrono::milliseconds(5000);
  auto started_within = [&](const shard_writer_actor& w, std::chrono::milliseconds wait) {
    bool started = false;
    self->request(w, wait, started_atom::value).receive([&](done_atom) { started = true; }, [](caf::error&) {});
    return started;
  };
  for (std::size_t shard = 0; shard < writers_.size(); ++shard) {
    if (started_within(writers_[shard], std::min(time_left(deadline), patience))) continue;
    if (time_left(deadline) == std::chrono::milliseconds(0)) return false;
    log::warn("a WAB shard writer has not started its first segment yet; still waiting",
              {{"shard", std::to_string(shard)}, {"waited_ms", std::to_string(patience.count())}});
    if (!started_within(writers_[shard], time_left(deadline))) return false;
  }
  return true;
}

shard_writer_actor pipeline::writer_for_new_connection() {
  return writers_[next_.fetch_add(1, std::memory_order_relaxed) % writers_.size()];
}

bool pipeline::shut_down(std::chrono::milliseconds timeout) {
  caf::scoped_actor self{sys_};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const bool writers = stop_all(self, writers_, deadline);
  std::vector<drain_actor> failover;
  {
    std::lock_guard<std::mutex> guard(failover_mutex_);
    for (auto& [key, d] : failover_drains_) failover.push_back(d);
    for (auto& [dir, d] : retired_drains_) failover.push_back(d);
    failover_drains_.clear();
    retired_drains_.clear();
  }
  const bool drains = stop_all(self, drains_, deadline) && stop_all(self, failover, deadline);
  for (auto& d : failover) self->send_exit(d, caf::exit_reason::user_shutdown);
  stop_all(self, replicators_, deadline);  // Replicated acks still waiting are refused
  for (auto& w : writers_) self->send_exit(w, caf::exit_reason::user_shutdown);
  for (auto& d : drains_) self->send_exit(d, caf::exit_reason::user_shutdown);
  for (auto& p : preparers_) self->send_exit(p, caf::exit_reason::user_shutdown);
  // In-flight commits are abandoned: their batches are redelivered after a restart.
  for (auto& lane : sinks_) self->send_exit(lane.runner, caf::exit_reason::user_shutdown);
  return writers && drains;
}

}  // namespace weir
