#include "runtime/actor_settings.hpp"

#include <algorithm>
#include <memory>

#include "runtime/pipeline.hpp"

namespace weir {

namespace {

template <class T>
T narrow(std::int64_t v) {
  return static_cast<T>(v);  // the schema's ranges keep every value within T
}

}  // namespace

std::uint16_t cluster_node(const config& cfg) {
  return cfg.cluster.listen.empty() ? 0 : narrow<std::uint16_t>(cfg.cluster.node_id);
}

std::string segment_prefix_of(std::uint16_t node) { return node == 0 ? "" : "node_" + std::to_string(node) + "/"; }

connection_settings connection_settings_for(const config& cfg) {
  connection_settings s;
  s.payload_cap = narrow<std::uint32_t>(cfg.limits.max_payload_bytes);
  s.max_batch_records = narrow<std::uint32_t>(cfg.limits.max_batch_records);
  s.mode = cfg.ingest.ack_mode;
  s.max_inflight = narrow<std::uint32_t>(cfg.ingest.max_inflight);
  s.direct_replies = cfg.runtime.direct_replies;
  s.budget = std::make_shared<frame_budget>(narrow<std::uint64_t>(cfg.limits.frame_memory_bytes));
  s.budget_retry_ms = narrow<std::uint32_t>(cfg.limits.frame_memory_retry_ms);
  s.budget_stall_ms = narrow<std::uint32_t>(cfg.limits.frame_memory_stall_ms);
  s.budget_read_timeout_ms = narrow<std::uint32_t>(cfg.listen.read_timeout_ms);
  return s;
}

shard_writer_settings writer_settings_for(const config& cfg, std::uint16_t shard, const std::string& shard_dir,
                                          std::uint64_t first_sequence) {
  shard_writer_settings s;
  s.shard = shard;
  s.shard_dir = shard_dir;
  s.segment_prefix = segment_prefix_of(cluster_node(cfg));
  s.first_sequence = first_sequence;
  s.segment_max_bytes = narrow<std::uint64_t>(cfg.wab.segment_max_bytes);
  s.min_free_bytes = narrow<std::uint64_t>(cfg.wab.min_free_bytes);
  s.segment_retry_ms = narrow<std::uint32_t>(cfg.wab.segment_retry_ms);
  s.max_group_records = narrow<std::uint32_t>(cfg.group_commit.max_records);
  s.max_group_bytes = narrow<std::uint64_t>(cfg.group_commit.max_bytes);
  // The writer's own sync is a mode of the group-commit protocol: off with
  // policy group, and for every group it can with adaptive (decision 0017).
  s.may_sync = cfg.group_commit.policy != commit_policy::group;
  s.sync_durable_only_here = cfg.group_commit.policy == commit_policy::adaptive;
  return s;
}

fsync_group_settings fsync_settings_for(const config& cfg, std::uint16_t shard) {
  fsync_group_settings s;
  s.shard = shard;
  s.policy = cfg.group_commit.policy;
  s.max_delay_us = narrow<std::uint32_t>(cfg.group_commit.max_delay_us);
  s.max_records = narrow<std::uint32_t>(cfg.group_commit.max_records);
  return s;
}

drain_settings drain_settings_for(const config& cfg, std::uint16_t shard, const std::string& shard_dir,
                                  std::uint64_t first_sequence) {
  drain_settings s;
  s.shard = shard;
  s.shard_dir = shard_dir;
  s.node = cluster_node(cfg);
  s.segment_prefix = segment_prefix_of(s.node);
  s.first_live_sequence = first_sequence;
  s.batch_max_records = narrow<std::uint32_t>(cfg.drain.batch_max_records);
  s.batch_max_bytes = narrow<std::uint64_t>(cfg.drain.batch_max_bytes);
  s.linger_ms = narrow<std::uint32_t>(cfg.drain.linger_ms);
  s.cursor_persist_ms = narrow<std::uint32_t>(cfg.drain.cursor_persist_ms);
  // One batch in flight per commit slot: more would only wait in the runner.
  s.max_in_flight = narrow<std::uint32_t>(std::max<std::int64_t>(1, cfg.sink.concurrency));
  return s;
}

sink_runner_settings runner_settings_for(const config& cfg, bool one_writer) {
  sink_runner_settings s;
  // A one-writer sink keeps the drains' sink.concurrency batches in flight
  // per shard (queued in the runner, ready when its one slot frees) but
  // commits them one after another on one thread: four threads taking turns
  // on SQLite's lock delivered less than one (decision 0009).
  s.concurrency = one_writer ? 1 : narrow<std::uint32_t>(cfg.sink.concurrency);
  s.retry_initial_ms = narrow<std::uint32_t>(cfg.sink.retry.initial_ms);
  s.retry_multiplier = cfg.sink.retry.multiplier;
  s.retry_max_ms = narrow<std::uint32_t>(cfg.sink.retry.max_ms);
  s.retry_jitter = cfg.sink.retry.jitter;
  s.health_interval_ms = narrow<std::uint32_t>(cfg.sink.health_interval_ms);
  s.down_after_failures = narrow<std::uint32_t>(cfg.sink.down_after_failures);
  s.dead_letter_recheck_ms = narrow<std::uint32_t>(cfg.drain.dead_letter_recheck_ms);
  return s;
}

replicator_settings replicator_settings_for(const config& cfg, std::uint16_t shard, const std::string& shard_dir) {
  replicator_settings s;
  s.node = cluster_node(cfg);
  s.shard = shard;
  s.shard_dir = shard_dir;
  s.copies_needed = narrow<std::uint32_t>(cfg.cluster.replicas - 1);
  s.request_timeout = std::chrono::milliseconds(cfg.cluster.replication_timeout_ms);
  return s;
}

std::shared_ptr<wab::spare_pool> spare_pool_for(const config& cfg, const std::string& shard_dir,
                                                std::shared_ptr<wab::file_io> io) {
  return std::make_shared<wab::spare_pool>(std::move(io), shard_dir, narrow<std::uint64_t>(cfg.wab.segment_max_bytes),
                                           narrow<std::uint32_t>(cfg.wab.spare_segments),
                                           narrow<std::uint64_t>(cfg.wab.min_free_bytes));
}

replica_store_settings replica_store_settings_for(const config& cfg, pipeline& shards,
                                                  std::shared_ptr<wab::file_io> io) {
  replica_store_settings rs;
  rs.node = cluster_node(cfg);
  rs.root = cfg.data_dir + "/replica";
  rs.io = std::move(io);
  rs.quarantine_dir = cfg.data_dir + "/quarantine";
  // Copies of other nodes' earlier lives are delivered from here.
  rs.retired = [&shards](std::uint16_t origin, std::uint16_t shard, const std::string& dir) {
    shards.start_retired_drain(origin, shard, dir);
  };
  rs.retired_done = [&shards](const std::string& dir) { shards.stop_retired_drain(dir); };
  return rs;
}

membership_settings membership_settings_for(const config& cfg, pipeline& shards, replica_store_actor store,
                                            std::uint64_t incarnation) {
  membership_settings ms;
  ms.node = cluster_node(cfg);
  ms.incarnation = incarnation;
  ms.listen = cfg.cluster.listen;
  ms.peers = cfg.cluster.peers;
  ms.heartbeat = std::chrono::milliseconds(cfg.cluster.heartbeat_ms);
  ms.failover_after = std::chrono::milliseconds(cfg.cluster.failover_after_ms);
  // A peer that restarts is called again well within failover_after: a
  // longer reconnect backoff would let it fail over a live peer first.
  ms.reconnect_max = std::clamp(ms.failover_after / 4, std::chrono::milliseconds(100), std::chrono::milliseconds(5000));
  ms.store = std::move(store);
  ms.replicators = shards.replicators();
  const std::string root = cfg.data_dir + "/replica";
  ms.failover.start = [&shards, root](std::uint16_t origin, std::uint16_t shard) {
    shards.start_failover_drain(origin, shard, replica_shard_dir(root, origin, shard));
  };
  ms.failover.stop = [&shards](std::uint16_t origin, std::optional<std::uint16_t> shard) {
    return shards.take_failover_drains(origin, shard);
  };
  return ms;
}

}  // namespace weir
