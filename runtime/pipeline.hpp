#pragma once
// Every actor between the sockets and the sinks: per shard a shard_writer,
// an fsync_group and one drain per sink; per sink a sink_runner. Each sink's
// drains read the shard on their own, with their own cursors, so one sink
// down never holds another back; a segment goes once every sink confirmed
// it (actors/drain/segment_release.hpp). Connections are pinned round-robin
// to a shard for their whole life, which keeps each connection's records in
// order in one shard's WAB.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <caf/fwd.hpp>

#include "config/config.hpp"
#include "actors/actor_thread.hpp"
#include "actors/buffered_activity.hpp"
#include "actors/drain.hpp"
#include "messages/cluster_protocol.hpp"
#include "messages/drain_protocol.hpp"
#include "messages/ingest_protocol.hpp"
#include "sinks/sink.hpp"
#include "wab/dead_letter_store.hpp"
#include "observability/cluster_metrics.hpp"
#include "observability/metrics.hpp"
#include "observability/delivery_status.hpp"
#include "wab/file_io.hpp"
#include "wab/wab_usage.hpp"
#include "runtime/wab_startup.hpp"

namespace weir {

/// What a harness may replace (the cluster simulation runs whole nodes on
/// CAF's test scheduler): the sink, and where the actors run.
struct pipeline_seams {
  std::shared_ptr<sink_factory> sink;  // the first sink's; null: made from the configuration
  actor_thread thread = actor_thread::own;
};

class pipeline {
 public:
  /// Throws startup_error when the sink cannot be set up from the configuration.
  /// `stats` may be null (tests); it must outlive the pipeline.
  pipeline(caf::actor_system& sys, const config& cfg, const wab_startup& recovered,
           std::shared_ptr<wab::file_io> io, std::shared_ptr<wab::wab_usage> usage, metrics* stats = nullptr,
           cluster_metrics* cluster_stats = nullptr, pipeline_seams seams = {});
  /// Stops every actor still running (an aborted startup): the actor system
  /// cannot end while they live.
  ~pipeline();
  pipeline(const pipeline&) = delete;
  pipeline& operator=(const pipeline&) = delete;

  /// Waits until every shard's writer has tried its first segment (a
  /// writer starts on its own thread): before that, readiness would say no
  /// writer runs, and the WAB would not yet hold the segment a restart
  /// continues with. False when that took longer than `timeout`.
  bool wait_started(std::chrono::milliseconds timeout);

  /// The writer the next connection is pinned to.
  shard_writer_actor writer_for_new_connection();
  /// Every shard's writer, by shard.
  const std::vector<shard_writer_actor>& writers() const { return writers_; }

  /// Writes and syncs everything queued, seals the open segments and stops
  /// the writers, then the drains and the sink. Returns false when that took
  /// longer than `timeout`.
  bool shut_down(std::chrono::milliseconds timeout);

  /// One sink's runner and what reports on it.
  struct sink_lane {
    std::string name, type;
    std::shared_ptr<sink_factory> factory;
    sink_runner_actor runner;
    std::shared_ptr<delivery_status> delivery = std::make_shared<delivery_status>();
    std::shared_ptr<dead_letter_store> dead_letters;
    std::uint32_t batches_in_flight = 4;  // its sink.concurrency, for each of its drains
  };
  /// In the configured order (metrics' sink(i) is sinks()[i]).
  const std::vector<sink_lane>& sinks() const { return sinks_; }
  /// When any shard writer last acked a Buffered push.
  const std::shared_ptr<buffered_activity>& buffered() const { return buffered_; }
  /// In a cluster, each shard's replicator (else empty).
  const std::vector<replicator_actor>& replicators() const { return replicators_; }
  /// Failover: delivers `origin`'s replica of `shard` (in `replica_dir`) to
  /// every sink, with the record ids its origin would have given. Taken,
  /// `origin`'s failover drains (of every shard, or of `shard` only) are the
  /// caller's to shut down (membership must know when they have ended).
  void start_failover_drain(std::uint16_t origin, std::uint16_t shard, const std::string& replica_dir);
  std::vector<drain_actor> take_failover_drains(std::uint16_t origin, std::optional<std::uint16_t> shard);
  /// A retired copy of an earlier life of `origin` (in `dir`, sealed) is
  /// delivered as a failover copy is, until the replica store says it is
  /// done (stop_retired_drain). Safe from any thread.
  void start_retired_drain(std::uint16_t origin, std::uint16_t shard, const std::string& dir);
  void stop_retired_drain(const std::string& dir);

  /// Reads every sink's secret files again (SIGHUP).
  sink_factory::secret_reload reload_sink_secrets();

 private:
  void start_sinks(const config& cfg, std::shared_ptr<wab::file_io> io, metrics* stats, pipeline_seams& seams);
  /// One drain per sink over a copy of `origin`'s shard in `dir` (nothing
  /// more is written to it), sharing one release.
  std::vector<drain_actor> spawn_copy_drains(std::uint16_t origin, std::uint16_t shard, const std::string& dir);
  void stop_retired_drain_locked(const std::string& dir);

  caf::actor_system& sys_;
  std::vector<shard_writer_actor> writers_;
  std::vector<drain_actor> drains_;
  std::vector<segment_preparer_actor> preparers_;
  std::vector<replicator_actor> replicators_;
  std::mutex failover_mutex_;  // the hooks run on the membership actor's thread
  std::multimap<std::pair<std::uint16_t, std::uint16_t>, drain_actor> failover_drains_;  // by (origin, shard)
  std::multimap<std::string, drain_actor> retired_drains_;  // by directory
  drain_settings failover_template_;
  std::vector<sink_lane> sinks_;
  std::shared_ptr<buffered_activity> buffered_ = std::make_shared<buffered_activity>();
  std::atomic<std::uint64_t> next_{0};
};

}  // namespace weir
