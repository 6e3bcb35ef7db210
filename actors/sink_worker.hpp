#pragma once
// sink_worker: one commit slot of the sink runner, on its own thread (sink
// clients block: libpq, SQLite, a synchronous HTTP client). It owns one sink
// object, runs one commit at a time, and stores the records the sink refused
// as dead letters before it answers, so a batch is never confirmed with a
// refused record lost.
//
// Interface:    sink_worker_actor (messages/drain_protocol.hpp)
//               commit_job => commit_outcome
//               (probe_atom) => sink_health, why
#include <memory>

#include <caf/fwd.hpp>

#include "actors/actor_thread.hpp"
#include "messages/drain_protocol.hpp"
#include "wab/dead_letter_store.hpp"
#include "sinks/sink.hpp"

namespace weir {

struct sink_metrics;

/// `stats` may be null (tests).
sink_worker_actor spawn_sink_worker(caf::actor_system& sys, std::shared_ptr<sink_factory> factory,
                                    std::shared_ptr<dead_letter_store> dead_letters, sink_metrics* stats,
                                    actor_thread thread = actor_thread::own);

}  // namespace weir
