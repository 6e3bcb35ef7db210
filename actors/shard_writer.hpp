#pragma once
// shard_writer: owns one shard's active WAB segment, on its own thread
// (writes block). Requests that arrive together are written with one write
// call; Buffered records are answered right after it, Durable ones are handed
// to the shard's fsync_group, which answers them after the covering sync.
//
// Messages in:  ingest_request                 from a connection (answered to its reply_to)
//               (flush_atom)                   write what is queued (self-sent)
//               (started_atom) => done_atom    the first segment was tried (startup)
//               (shutdown_atom) => done_atom   write what is queued, seal, stop
// Messages out: ingest_reply to the connection (Buffered; any failure);
//               a write group that acked a Buffered push is noted in
//               `buffered` (buffered_activity)
//               sync_request to the fsync_group (Durable acks);
//               a Durable group is synced here instead when the fsync_group
//               is idle and the mailbox empty, or (sync_durable_only_here)
//               at a flush while the shard has only Durable pushes (one
//               thread hop fewer); synced_acks to the fsync_group when more
//               waits in the mailbox after such a sync (it writes their
//               replies while this thread goes on)
//               prepare_atom to the segment_preparer (a segment started
//               without a spare, one in a spare half full, offline)
//               (appended_atom, sequence, end) to each drain (one per
//               sink) for a new segment, and after a write when that
//               drain waits for one
//               (each is published in the shared append_notice; the drain
//               reads it when its linger ends)
// States:       writing (an open segment)
//               -> rotating (segment reached wab.segment_max_bytes, a write
//                  failed, or a spare became ready while the segment was a
//                  growing file: it is sealed and the next one started, in a
//                  spare when one is ready)
//               -> offline (no segment can be created, or its disk has less
//                  than min_free_bytes free: every request gets the failure
//                  reply; creation is retried every segment_retry_ms on a timer)
//               -> writing
//               Behaviours (become): online() queues and writes in groups
//               (writing and rotating), offline() refuses every request at
//               once and retries on the timer, shutting_down() (sealed,
//               waiting for the last syncs) refuses what still comes.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "actors/actor_thread.hpp"
#include "actors/append_notice.hpp"
#include "actors/buffered_activity.hpp"
#include "actors/segment_sync.hpp"
#include "messages/drain_protocol.hpp"
#include "messages/ingest_protocol.hpp"
#include "wab/file_io.hpp"
#include "wab/spare_pool.hpp"
#include "wab/wab_usage.hpp"

namespace weir {

struct shard_metrics;

struct shard_writer_settings {
  std::uint16_t shard = 0;
  std::string shard_dir;
  /// Put before a segment's name in record coordinates: "node_<id>/" in a
  /// cluster, so that no two nodes give out the same record id.
  std::string segment_prefix;
  std::uint64_t first_sequence = 1;  // sequence of the first segment this run creates
  std::uint64_t segment_max_bytes = 64ull * 1024 * 1024;
  std::uint32_t max_group_records = 4096;  // a group is written once it holds this many
  std::uint64_t max_group_bytes = 4ull * 1024 * 1024;  // ... or this many bytes
  std::uint32_t segment_retry_ms = 1000;  // an offline shard tries to start a segment this often
  /// A segment is started only with this much free on its disk.
  std::uint64_t min_free_bytes = 1024 * 1024;
  std::shared_ptr<wab::file_io> io;
  std::shared_ptr<wab::wab_usage> usage;
  /// One drain per sink, each told what is readable: every write is
  /// published in its `notice` (the same object as that drain's), and it
  /// gets a message for a new segment, or when it asked for one. A null
  /// notice (for both): a message after every write. None: tests.
  struct drain_link {
    segment_listener_actor drain;
    std::shared_ptr<append_notice> notice;
  };
  std::vector<drain_link> drains;
  /// In a cluster: told as the drain is (it ships what is written to the
  /// peers), and where Replicated acks wait after their sync. Else null.
  replicator_actor replicator;
  replication_route replication;
  /// Spares to start segments in, and who refills them; either may be null
  /// (every segment is then a new file that grows as it is written).
  std::shared_ptr<wab::spare_pool> spares;
  segment_preparer_actor preparer;
  /// Shared with the fsync group (its settings' `load`): while the group is
  /// idle and nothing else waits, the writer syncs a Durable group itself.
  /// Null: every Durable group goes to the fsync group.
  std::shared_ptr<weir::sync_load> sync_load;
  /// With the group idle, also sync here when more waits, while the shard
  /// has had only Durable pushes for a second (the adaptive policy; the
  /// deadline policy leaves every sync under load to its group's timing).
  bool sync_durable_only_here = false;
  /// Whether this writer syncs a Durable group itself at all (not with
  /// group_commit.policy: group): the wiring then gives it a sync_load.
  bool may_sync = true;
  /// Told of every write group that acked a Buffered push (the io thread
  /// polls its sockets for a while after one). May be null.
  std::shared_ptr<buffered_activity> buffered;
  /// How long after a Buffered push the shard counts as having Buffered traffic.
  std::chrono::milliseconds buffered_quiet{1000};
  shard_metrics* stats = nullptr;  // may be null (tests)
  actor_thread thread = actor_thread::own;
};

shard_writer_actor spawn_shard_writer(caf::actor_system& sys, shard_writer_settings settings,
                                      fsync_group_actor fsync_group);

}  // namespace weir
