#pragma once
// fsync_group: group commit for one shard, on its own thread (fdatasync
// blocks). One fdatasync releases every Durable ack it covers; after a failed
// one nothing it covers is ever acked, and the segment is finished for good.
//
// Interface:    fsync_group_actor (messages/ingest_protocol.hpp)
// Messages in:  sync_request                 acks waiting on a segment's sync
//               synced_acks                  acks of a sync the writer ran: only
//                                            their replies are left to write
//               (flush_atom, epoch)          time to sync (self-sent)
//               (shutdown_atom) => done_atom sync what is queued, then stop
// Messages out: ingest_reply to each pending_ack's connection
// States:       idle -> collecting -> syncing -> idle (syncing is one
//               handler's fdatasync, collecting the requests in the mailbox
//               meanwhile: one behaviour serves all three)
//   adaptive: the first request after a sync schedules one at once; whatever
//             arrives while fdatasync runs waits in the mailbox and rides the
//             next one, so a lone producer never waits on a timer.
//   deadline: a sync runs max_delay_us after the first waiting request, or as
//             soon as max_records records wait.
#include <cstdint>
#include <memory>

#include <caf/fwd.hpp>

#include "actors/actor_thread.hpp"
#include "actors/segment_sync.hpp"
#include "messages/ingest_protocol.hpp"
#include "config/config.hpp"

namespace weir {

struct shard_metrics;

struct fsync_group_settings {
  commit_policy policy = commit_policy::adaptive;  // deadline waits; adaptive and group sync at once
  std::uint32_t max_delay_us = 1000;
  std::uint32_t max_records = 4096;
  std::uint16_t shard = 0;
  shard_metrics* stats = nullptr;  // may be null (tests)
  /// Shared with the shard writer, which syncs itself while this is zero and
  /// nothing else waits (or only Durable pushes come: shard_writer.hpp);
  /// null: the writer always hands Durable requests here.
  std::shared_ptr<weir::sync_load> load;
  /// Where Replicated acks go after their sync (a cluster); else none.
  replication_route replication;
  actor_thread thread = actor_thread::own;
};

fsync_group_actor spawn_fsync_group(caf::actor_system& sys, const fsync_group_settings& settings);

}  // namespace weir
