#include "sim/daemon_life.hpp"

#include <algorithm>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/send.hpp>

#include "actors/drain.hpp"
#include "actors/fsync_group.hpp"
#include "actors/segment_preparer.hpp"
#include "actors/segment_sync.hpp"
#include "actors/shard_writer.hpp"
#include "actors/sink_runner.hpp"
#include "messages/ingest_protocol.hpp"
#include "wab/segment_format.hpp"
#include "wab/spare_pool.hpp"

namespace weir::sim {

std::string sim_paths::shard_dir(std::uint16_t shard) const { return root + "/wab/" + wab::shard_dir_name(shard); }

daemon_life::daemon_life(const sim_config& cfg, const sim_paths& paths, std::shared_ptr<wab::file_io> io,
                         std::shared_ptr<sink_factory> sink, reply_observer* replies, exit_hook on_exit)
    : on_exit_(std::move(on_exit)) {
  recover(cfg, paths, *io);

  cfg_ = std::make_unique<caf::actor_system_config>();
  cfg_->set("scheduler.policy", caf::atom("testing"));
  cfg_->add_message_types<caf::id_block::weir>();
  sys_ = std::make_unique<caf::actor_system>(*cfg_);
  sched_ = &dynamic_cast<caf::scheduler::test_coordinator&>(sys_->scheduler());

  dead_letters_ = std::make_shared<dead_letter_store>(io, paths.dead_letters(), cfg.dead_letter_max_bytes);
  // The settings come from the seed's sim_config, not through
  // runtime/actor_settings.cpp: the sweep explores combinations the config
  // cannot express (the writer's and the fsync group's record limits apart,
  // segments of a few hundred bytes), and what it leaves out keeps the
  // actors' defaults, which are the config's defaults.
  sink_runner_settings rs;
  rs.concurrency = cfg.sink_concurrency;
  rs.retry_initial_ms = cfg.retry_initial_ms;
  rs.retry_multiplier = 2.0;
  rs.retry_max_ms = cfg.retry_max_ms;
  rs.retry_jitter = 0;  // the runner's jitter comes from std::random_device: it would break replay
  rs.health_interval_ms = cfg.health_interval_ms;
  rs.worker_thread = actor_thread::scheduler;
  runner_ = spawn_sink_runner(*sys_, rs, std::move(sink), dead_letters_, status_);
  watch(caf::actor_cast<caf::abstract_actor*>(runner_), "sink_runner");

  for (const auto& s : started_) {
    const std::string dir = paths.shard_dir(s.shard);
    std::shared_ptr<wab::spare_pool> spares;
    if (cfg.spare_segments > 0) {
      // As runtime/pipeline.cpp: the spares an earlier life left are adopted
      // (a failure to read them leaves the pool empty, and the daemon goes on).
      spares = std::make_shared<wab::spare_pool>(io, dir, cfg.segment_max_bytes, cfg.spare_segments, 0);
      (void)spares->adopt();
    }
    drain_settings ds;
    ds.shard = s.shard;
    ds.shard_dir = dir;
    ds.first_live_sequence = s.next_sequence;
    ds.batch_max_records = cfg.batch_max_records;
    ds.linger_ms = cfg.linger_ms;
    ds.max_in_flight = std::max<std::uint32_t>(1, cfg.sink_concurrency);
    ds.io = io;
    ds.usage = usage_;
    for (const auto& seg : s.recovery.segments) ds.recovered_records[seg.sequence] = seg.records;
    ds.notice = std::make_shared<append_notice>();
    ds.spares = spares;
    ds.thread = actor_thread::scheduler;
    drains_.push_back(spawn_drain(*sys_, ds, runner_));
    watch(caf::actor_cast<caf::abstract_actor*>(drains_.back()), "drain " + std::to_string(s.shard));

    fsync_group_settings fs;
    fs.policy = cfg.policy;
    std::shared_ptr<sync_load> load;
    if (cfg.wiring == sync_wiring::daemon) {
      fs.load = load = std::make_shared<sync_load>();
      loads_.push_back(load);
    }
    fs.max_delay_us = cfg.fsync_max_delay_us;
    fs.max_records = cfg.fsync_max_records;
    fs.shard = s.shard;
    fs.thread = actor_thread::scheduler;
    fsyncs_.push_back(spawn_fsync_group(*sys_, fs));
    watch(caf::actor_cast<caf::abstract_actor*>(fsyncs_.back()), "fsync_group " + std::to_string(s.shard));

    shard_writer_settings ws;
    ws.shard = s.shard;
    ws.shard_dir = dir;
    ws.first_sequence = s.next_sequence;
    ws.segment_max_bytes = cfg.segment_max_bytes;
    ws.max_group_records = cfg.max_group_records;
    ws.io = io;
    ws.usage = usage_;
    ws.drains.push_back({drains_.back(), ds.notice});
    if (spares) {
      ws.spares = spares;
      preparers_.push_back(spawn_segment_preparer(*sys_, {spares, actor_thread::scheduler}));
      ws.preparer = preparers_.back();
      watch(caf::actor_cast<caf::abstract_actor*>(preparers_.back()), "segment_preparer " + std::to_string(s.shard));
    }
    if (load) {
      ws.sync_load = load;
      ws.sync_durable_only_here = cfg.policy == commit_policy::adaptive;
      ws.buffered_quiet = cfg.quiet_at_once ? std::chrono::milliseconds(0) : std::chrono::hours(24 * 365);
    }
    ws.thread = actor_thread::scheduler;
    writers_.push_back(spawn_shard_writer(*sys_, ws, fsyncs_.back()));
    watch(caf::actor_cast<caf::abstract_actor*>(writers_.back()), "shard_writer " + std::to_string(s.shard));
  }
  for (std::size_t p = 0; p < cfg.producers; ++p) {
    connections_.push_back(std::make_shared<sim_connection>(replies, p));
    producers_.push_back(sys_->spawn<producer_actor>(connections_.back()));
  }
}

/// The startup of runtime/wab_startup.cpp, over the sim file system: every
/// shard recovered, numbering continuing after both the highest segment
/// found and the cursor (a reused sequence would give new records the ids of
/// delivered ones), the live bytes counted against the cap.
void daemon_life::recover(const sim_config& cfg, const sim_paths& paths, wab::file_io& io) {
  usage_ = std::make_shared<wab::wab_usage>(cfg.wab_cap_bytes);
  for (std::uint16_t shard = 0; shard < cfg.shards; ++shard) {
    shard_start s;
    s.shard = shard;
    const std::string dir = paths.shard_dir(shard);
    s.recovery = wab::recover_shard(io, dir, paths.quarantine());
    s.cursor = wab::load_cursor(io, dir);
    s.next_sequence = wab::next_segment_sequence(s.recovery.next_sequence, s.cursor);
    for (const auto& seg : s.recovery.segments) usage_->add(seg.valid_bytes);
    started_.push_back(std::move(s));
  }
}

void daemon_life::watch(caf::abstract_actor* a, std::string name) {
  auto hook = on_exit_;
  a->attach_functor(
      [hook, name = std::move(name)](const caf::error& reason) { hook(name, reason); });
}

std::uint64_t daemon_life::stray_replies() const {
  std::uint64_t n = 0;
  for (const auto& c : connections_) n += c->stray_replies();
  return n;
}

std::uint64_t daemon_life::handed_replies() const {
  std::uint64_t n = 0;
  for (const auto& l : loads_) n += l->replies_handed_count();
  return n;
}

void daemon_life::kill() {
  if (killed_) return;
  killed_ = true;
  auto kill_all = [](const auto& actors) {
    for (const auto& a : actors) caf::anon_send_exit(a, caf::exit_reason::kill);
  };
  kill_all(writers_);
  kill_all(fsyncs_);
  kill_all(preparers_);
  kill_all(drains_);
  kill_all(producers_);
  caf::anon_send_exit(runner_, caf::exit_reason::kill);  // its workers are linked to it and go with it
  while (sched_->try_run_once()) {
  }
}

daemon_life::~daemon_life() {
  kill();
  // Handles first: the actor system waits for its actors, not for our references.
  writers_.clear();
  fsyncs_.clear();
  preparers_.clear();
  drains_.clear();
  producers_.clear();
  runner_ = nullptr;
  sys_.reset();
  cfg_.reset();
}

}  // namespace weir::sim
