#pragma once
// One Durable sync and the answers it releases: what the fsync group does for
// every group, and what the shard writer does itself when the fsync group is
// idle and nothing else waits, or only Durable pushes come (one thread hop
// fewer: actors/shard_writer.cpp, sync_here).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "actors/reply_queue.hpp"
#include "messages/cluster_protocol.hpp"
#include "messages/ingest_protocol.hpp"
#include "observability/log.hpp"
#include "observability/metrics.hpp"
#include "wab/segment_writer.hpp"

namespace weir {

/// What the shard writer and its fsync group share to decide who syncs a
/// Durable group (group_commit.policy, decision 0024): the Durable requests
/// handed to the group and not answered yet. At zero no sync waits there or
/// runs (the group may still be writing the replies of a sync the writer
/// ran, `synced_acks`, which holds up no sync of the writer's), and the
/// writer may sync a group itself.
class sync_load {
 public:
  /// The writer handed `requests` to the fsync group.
  void handed_to_group(std::uint64_t requests) { outstanding_.fetch_add(requests, std::memory_order_acq_rel); }
  /// The group answered `requests` of them (after their sync).
  void answered_by_group(std::uint64_t requests) { outstanding_.fetch_sub(requests, std::memory_order_release); }
  /// No request waits at the group and no sync of it runs.
  bool group_idle() const { return outstanding_.load(std::memory_order_acquire) == 0; }
  std::uint64_t outstanding() const { return outstanding_.load(std::memory_order_acquire); }

  /// The writer handed the replies of a sync it ran to the group
  /// (`synced_acks`); counted so that a test can see the path run.
  void replies_handed() { replies_handed_.fetch_add(1, std::memory_order_relaxed); }
  std::uint64_t replies_handed_count() const { return replies_handed_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> outstanding_{0};
  std::atomic<std::uint64_t> replies_handed_{0};
};

/// fdatasync of `segment`, timed and counted; a failure is logged once (a
/// finished segment answers -EIO at once without a second log line).
inline int timed_sync(wab::segment_writer& segment, shard_metrics* stats) {
  const bool already_failed = segment.sync_failed();
  const auto started = std::chrono::steady_clock::now();
  const int rc = segment.sync();
  if (already_failed) return rc;
  if (stats) {
    stats->fsync_duration->Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    if (rc < 0) stats->fsync_failures->Increment();
  }
  if (rc < 0)
    log::error("WAB fdatasync failed; the segment is retired and nothing it holds unacked will be acked",
               {{"file", segment.path()}, {"error", std::strerror(-rc)}});
  return rc;
}

/// Counts one sync that released `records` Durable records.
inline void count_released(shard_metrics* stats, std::uint64_t records) {
  if (!stats || records == 0) return;
  stats->group_commit_records->Observe(static_cast<double>(records));
  stats->fsyncs.fetch_add(1, std::memory_order_relaxed);
  stats->synced_records.fetch_add(records, std::memory_order_relaxed);
}

/// Where Replicated acks go after their local sync: the shard's replicator,
/// which answers them once enough peers hold their records, or refuses them
/// `timeout` after the sync.
struct replication_route {
  replicator_actor to;
  std::chrono::nanoseconds timeout{std::chrono::seconds(5)};
};

/// Answers acks after the sync that covered them returned `rc`; `direct`:
/// straight into the connections' reply queues (deliver_reply). Replicated
/// acks of a good sync go on to `route` (failure if there is none).
template <class Self>
void answer_synced(Self* self, std::vector<pending_ack>& acks, int rc, bool direct,
                   const replication_route* route = nullptr) {
  replication_wait waiting;
  for (auto& a : acks) {
    if (rc == 0 && a.replicate_end > 0 && route && route->to) {
      // The acks of one sync are all on its one segment.
      waiting.sequence = a.replicate_sequence;
      waiting.end_offset = std::max(waiting.end_offset, a.replicate_end);
      waiting.acks.push_back(std::move(a));
      continue;
    }
    const bool ok = rc == 0 && a.replicate_end == 0;
    deliver_reply(self, a.replies, a.to,
                  ok ? ingest_reply{a.tag, std::move(a.on_success), a.records}
                     : ingest_reply{a.tag, std::move(a.on_failure), 0},
                  direct);
  }
  if (waiting.acks.empty()) return;
  // The actor clock: the replicator compares the deadline with its own.
  waiting.deadline_ns = (self->clock().now() + route->timeout).time_since_epoch().count();
  self->send(route->to, std::move(waiting));
}

}  // namespace weir
