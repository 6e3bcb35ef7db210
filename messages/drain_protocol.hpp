#pragma once
// The delivery protocol: shard_writer -> drain -> sink_runner -> sink_worker.
// Each actor's whole interface is one typed_actor below.
//
//   shard_writer -> drain        (appended_atom, sequence, end_offset)   records up to end_offset are
//                                                                        written; a higher sequence closes
//                                                                        every lower one
//   shard_writer -> drain        (sealed_atom, sequence, end_offset)     no more appends to this segment
//                                                                        (rotated, or retired after a failed
//                                                                        write), even if no next one exists
//   drain        -> sink_runner  delivery_batch                          commit these, then tell reply_to
//   sink_runner  -> drain        (delivered_atom, batch_id, spent_batch) committed or dead-lettered, all of
//                                                                        it; its records come back to be
//                                                                        refilled
//   sink_runner  -> sink_worker  commit_job => commit_outcome            one commit on the worker's sink
//   sink_runner  -> sink_worker  (probe_atom) => sink_health, why        sink health
//   daemon       -> drain        shutdown_atom => done_atom              store the cursor, stop
//   drain, sink_runner: (linger_atom / retry_atom / probe_atom, epoch), (persist_atom)  their own timers
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "wire/sink_record.hpp"

namespace weir {

using appended_atom = caf::atom_constant<caf::atom("appended")>;
using sealed_atom = caf::atom_constant<caf::atom("sealed")>;
using delivered_atom = caf::atom_constant<caf::atom("delivered")>;
using linger_atom = caf::atom_constant<caf::atom("linger")>;
using persist_atom = caf::atom_constant<caf::atom("persist")>;
using retry_atom = caf::atom_constant<caf::atom("retry")>;
using probe_atom = caf::atom_constant<caf::atom("probe")>;

/// A delivered batch's records, handed back to the drain that read them. The
/// drain refills them for its next batches — their strings and payload
/// buffers are already allocated, so reading a record allocates nothing —
/// and what it does not keep is freed on its own thread, not on the
/// scheduler thread the runner shares with the connections. The drain takes
/// them only when nothing else holds them any more (a worker may not yet
/// have let go of its message; the last holder then frees them).
struct spent_batch {
  std::shared_ptr<std::vector<sink_record>> records;
};

/// What the sink runner needs of whoever sent a batch: the news that it is done.
using delivery_client_actor = caf::typed_actor<caf::reacts_to<delivered_atom, std::uint64_t, spent_batch>>;

struct delivery_batch {
  std::uint64_t id = 0;  // the drain's own numbering
  delivery_client_actor reply_to;  // told when the batch is done
  std::vector<sink_record> records;
};

/// Shared, so that sending a batch to a worker (and again on a retry) copies no record.
struct commit_job {
  std::shared_ptr<const std::vector<sink_record>> records;
};

struct commit_outcome {
  enum class kind : std::uint8_t { committed, transient, dead_letter_full };
  kind what = kind::committed;
  std::string error;
  std::int64_t retry_after_ms = -1;  // the sink asked for this wait (Retry-After)
  bool sink_answered = false;        // commit_result::answered
  std::uint64_t dead_lettered = 0;
  /// transient: the first `settled` records of the batch are done (stored or
  /// dead-lettered, `dead_lettered` of them); only the rest go again.
  std::uint64_t settled = 0;
  double seconds = 0;  // how long the commit took
};

/// What the shard writer needs of its drain: news of the segments.
using segment_listener_actor = caf::typed_actor<caf::reacts_to<appended_atom, std::uint64_t, std::uint64_t>,
                                               caf::reacts_to<sealed_atom, std::uint64_t, std::uint64_t>>;

using drain_actor = segment_listener_actor::extend<caf::reacts_to<delivered_atom, std::uint64_t, spent_batch>,
                                                   caf::reacts_to<linger_atom, std::uint64_t>,
                                                   caf::reacts_to<persist_atom>,
                                                   caf::replies_to<shutdown_atom>::with<done_atom>>;

/// What a drain needs of the sink runner: it takes batches.
using batch_consumer_actor = caf::typed_actor<caf::reacts_to<delivery_batch>>;

using sink_runner_actor = batch_consumer_actor::extend<caf::reacts_to<retry_atom, std::uint64_t>,
                                                       caf::reacts_to<probe_atom, std::uint64_t>>;

using sink_worker_actor = caf::typed_actor<caf::replies_to<commit_job>::with<commit_outcome>,
                                          caf::replies_to<probe_atom>::with<sink_health, std::string>>;

}  // namespace weir

// Local only: never serialized.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::delivery_batch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::spent_batch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::commit_job)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::commit_outcome)
