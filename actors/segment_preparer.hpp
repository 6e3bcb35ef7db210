#pragma once
// segment_preparer: keeps one shard's spare pool full, on its own thread
// (writing a segment's worth of zeros and syncing it takes far longer than
// an ack may wait, so it never happens on the shard writer's thread).
//
// Interface:    segment_preparer_actor (messages/ingest_protocol.hpp)
// Messages in:  prepare_atom => spare_ready_atom  from the shard writer (a
//               segment started without a spare, one in a spare half full,
//               offline): prepares spares until the pool holds
//               wab.spare_segments, answers when one is ready
// Messages out: the answer; an error answer when none could be made (a full
//               disk: logged once, the writer goes on with growing segments)
// States:       idle -> preparing -> idle (preparing is one handler's
//               work: one behaviour)
#include <memory>

#include <caf/fwd.hpp>

#include "actors/actor_thread.hpp"
#include "messages/ingest_protocol.hpp"
#include "wab/spare_pool.hpp"

namespace weir {

struct segment_preparer_settings {
  std::shared_ptr<wab::spare_pool> spares;
  actor_thread thread = actor_thread::own;
};

segment_preparer_actor spawn_segment_preparer(caf::actor_system& sys, segment_preparer_settings settings);

}  // namespace weir
