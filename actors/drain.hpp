#pragma once
// drain: one per shard and sink, on its own thread (it reads segment
// files). It follows the shard's WAB from its sink's confirm cursor — the active segment
// included, so a record is on its way to the sink within drain.linger_ms of
// being written — cuts batches, hands them to the sink runner, and advances
// the cursor only over the contiguous prefix of committed batches. Segments
// wholly behind every sink's stored cursor are deleted (or kept as spares)
// through the shard's segment_release, by whichever drain sees it first. Segments an
// earlier run sealed were not read at startup: the drain is where a damaged
// record in one is found, copied to quarantine and reported.
//
// Messages in:  (appended_atom, sequence, end_offset)  from the shard_writer: for a
//                                                      new segment, and otherwise
//                                                      when the drain asked in the
//                                                      append_notice
//                                                      (caught up, or a lingering
//                                                      batch could be full)
//               (sealed_atom, sequence, end_offset)    from the shard_writer
//               (delivered_atom, batch_id, spent_batch) from the sink_runner (the
//                                                      batch's records, refilled by
//                                                      later reads)
//               (linger_atom, epoch)                   a partial batch waited long enough (self-sent)
//               (persist_atom)                         make the cursor durable (self-sent, at
//                                                      most every cursor_persist_ms)
//               (shutdown_atom) => done_atom           persist the cursor, stop
// Messages out: delivery_batch to the sink_runner
// States:       following (reading up to the written end) -> waiting (caught
//               up; the next append wakes it) -> lingering (a partial batch
//               waits drain.linger_ms; Durable appends wake it only once
//               they could fill the batch) -> full (sink.concurrency batches
//               in flight: reads resume when one is confirmed). Phases of
//               its queues, not behaviours: every message is taken in each,
//               and what it does follows from what is in flight and pending.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include <caf/fwd.hpp>

#include "actors/actor_thread.hpp"
#include "actors/append_notice.hpp"
#include "messages/cluster_protocol.hpp"
#include "messages/drain_protocol.hpp"
#include "wab/file_io.hpp"
#include "wab/spare_pool.hpp"
#include "wab/wab_usage.hpp"

namespace weir {

struct shard_metrics;
struct shard_delivery;
namespace drain_parts {
class segment_release;
class damage_claims;
}

struct drain_settings {
  std::uint16_t shard = 0;
  std::string shard_dir;
  /// The node whose records these are (0 outside a cluster), and what its
  /// record coordinates put before "shard_NN/seg_…" ("node_<id>/", or "").
  std::uint16_t node = 0;
  std::string segment_prefix;
  /// Segments below this sequence were written by an earlier run: closed,
  /// their size final. The writer announces the others.
  std::uint64_t first_live_sequence = 1;
  std::uint32_t batch_max_records = 1000;
  std::uint64_t batch_max_bytes = 4ull * 1024 * 1024;
  std::uint32_t linger_ms = 5;
  std::uint32_t cursor_persist_ms = 200;  // longest the stored cursor trails delivery
  std::uint32_t max_in_flight = 4;
  std::shared_ptr<wab::file_io> io;
  std::shared_ptr<wab::wab_usage> usage;
  /// Delivered segments are given to it as spares, when it wants them; else
  /// (or when null) deleted.
  std::shared_ptr<wab::spare_pool> spares;
  /// Where a segment found damaged while draining is copied; empty: not copied.
  std::string quarantine_dir;
  /// Records per segment found by startup recovery, for the lag at startup.
  std::map<std::uint64_t, std::uint64_t> recovered_records;
  /// Segments startup recovery found damaged, reported and copied to
  /// quarantine (or tried to), its count of their records leaving out those
  /// lost: the drain, meeting that damage again, neither copies nor counts it
  /// a second time.
  std::set<std::uint64_t> damaged_at_startup;
  /// The sink this drain feeds: names its cursor file (wab/confirm_cursor.hpp).
  std::string sink = "default";
  /// Its place among the shard's drains, in `release` (one per sink).
  std::size_t sink_index = 0;
  /// Shared by the shard's drains; null: this drain is the shard's only one.
  std::shared_ptr<drain_parts::segment_release> release;
  /// Shared by the shard's drains: which one says, copies to quarantine and
  /// counts in `stats` the damage of a segment (each sink's meets the same);
  /// null: this drain is the shard's only one.
  std::shared_ptr<drain_parts::damage_claims> damage_claims;
  shard_metrics* stats = nullptr;      // may be null (tests)
  shard_delivery* progress = nullptr;  // this sink's backlog, confirmed and oldest record; may be null
  /// Told (confirmed_atom, sequence) when every sink's stored cursor has
  /// reached a new segment: every segment below it is delivered (a cluster's replicator,
  /// which lets the peers drop their copies). May be null.
  confirm_listener_actor confirmed;
  /// The same object as the shard writer's `notice`: where the written
  /// data ends, and the drain's wish for a message (docs/architecture.md,
  /// drain). Null for both: the writer sends a message after every write.
  std::shared_ptr<append_notice> notice;
  actor_thread thread = actor_thread::own;
};

drain_actor spawn_drain(caf::actor_system& sys, drain_settings settings, batch_consumer_actor sink_runner);

}  // namespace weir
