#pragma once
// One life of the daemon, from startup to crash: WAB recovery of every shard
// directory over the sim file system (as runtime/wab_startup.cpp does it),
// then the actors as runtime/pipeline.cpp wires them — per shard a drain,
// an fsync_group and a shard_writer, one sink_runner with its workers — all
// on CAF's test scheduler in one actor system, plus the simulated producers.
// A crash ends the life: every actor is killed and the actor system goes.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "messages/drain_protocol.hpp"
#include "messages/ingest_protocol.hpp"
#include "wab/dead_letter_store.hpp"
#include "observability/delivery_status.hpp"
#include "wab/confirm_cursor.hpp"
#include "wab/recovery.hpp"
#include "wab/wab_usage.hpp"
#include "sim/producer_actor.hpp"
#include "sim/sim_config.hpp"
#include "sinks/sink.hpp"

namespace caf::scheduler {
class test_coordinator;
}

namespace weir {
struct sync_load;
}

namespace weir::sim {

/// Where the simulated daemon keeps its data (the layout of data_dir).
struct sim_paths {
  std::string root;
  std::string shard_dir(std::uint16_t shard) const;
  std::string quarantine() const { return root + "/quarantine"; }
  std::string dead_letters() const { return root + "/dead_letter"; }
};

/// What startup recovery found in one shard directory.
struct shard_start {
  std::uint16_t shard = 0;
  wab::shard_recovery recovery;
  std::optional<wab::confirm_cursor> cursor;
  std::uint64_t next_sequence = 1;
};

class daemon_life {
 public:
  /// Called when an actor exits: its name and the reason.
  using exit_hook = std::function<void(const std::string&, const caf::error&)>;

  /// Recovers the WAB and spawns every actor (none has run yet). Throws
  /// wab::recovery_error like the daemon's startup.
  daemon_life(const sim_config& cfg, const sim_paths& paths, std::shared_ptr<wab::file_io> io,
              std::shared_ptr<sink_factory> sink, reply_observer* replies, exit_hook on_exit);
  ~daemon_life();
  daemon_life(const daemon_life&) = delete;
  daemon_life& operator=(const daemon_life&) = delete;

  caf::scheduler::test_coordinator& sched() { return *sched_; }
  /// Groups whose replies a writer of this life handed to its fsync group.
  std::uint64_t handed_replies() const;
  const shard_writer_actor& writer(std::uint16_t shard) const { return writers_.at(shard); }
  const caf::actor& producer(std::size_t i) const { return producers_.at(i); }
  sim_connection& connection(std::size_t i) const { return *connections_.at(i); }
  /// Replies the producers' channels ignored (sim_connection::stray_replies).
  std::uint64_t stray_replies() const;
  const std::vector<shard_start>& started() const { return started_; }
  const std::shared_ptr<wab::wab_usage>& usage() const { return usage_; }

  /// The crash: every actor is killed with whatever its mailbox held. The
  /// file system must be frozen first, so that nothing they still do lands.
  void kill();

 private:
  void recover(const sim_config& cfg, const sim_paths& paths, wab::file_io& io);
  void watch(caf::abstract_actor* a, std::string name);

  exit_hook on_exit_;
  std::unique_ptr<caf::actor_system_config> cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  caf::scheduler::test_coordinator* sched_ = nullptr;
  std::vector<shard_start> started_;
  std::shared_ptr<wab::wab_usage> usage_;
  std::shared_ptr<dead_letter_store> dead_letters_;
  std::shared_ptr<delivery_status> status_ = std::make_shared<delivery_status>();
  sink_runner_actor runner_;
  std::vector<shard_writer_actor> writers_;
  std::vector<fsync_group_actor> fsyncs_;
  std::vector<segment_preparer_actor> preparers_;
  std::vector<std::shared_ptr<sync_load>> loads_;  // the daemon's wiring: one per shard
  std::vector<drain_actor> drains_;
  std::vector<caf::actor> producers_;
  std::vector<std::shared_ptr<sim_connection>> connections_;  // producers_[i]'s
  bool killed_ = false;
};

}  // namespace weir::sim
