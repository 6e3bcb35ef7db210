#pragma once
// sink_runner: one per sink. Takes delivery batches from every shard's
// drain, runs them on `sink.concurrency` sink_workers, and answers a drain
// only once its batch is committed (refused records dead-lettered). It never
// blocks: commits run on the workers' threads.
//
// Messages in:  delivery_batch                  from a drain (answered to its reply_to)
//               (retry_atom, epoch)             backoff over (self-sent)
//               (probe_atom, epoch)             health interval (self-sent)
// Messages out: (delivered_atom, batch id, spent_batch)  to the drain, with
//                                               its records back to reuse
//               commit_job, (probe_atom)        to the workers
// States:       idle -> delivering -> retrying (a commit failed transiently:
//               nothing is dispatched until the backoff is over, and the failed
//               batch goes first, so per-shard order holds with concurrency 1)
//               -> dead_letter_full (a refused record has nowhere to go:
//               rechecked every dead_letter_recheck_ms) -> delivering ...
//               Two behaviours (become): delivering() dispatches what comes;
//               waiting() (retrying, dead letters full) only queues it until
//               the timer, or a probe that reaches a sink it could not reach.
// Failures count attempts, not slots: the commits in flight when the first
//               of them fails are one attempt, however many slots report it.
// Backoff: sink.retry.initial_ms x multiplier^(failures-1), capped at
// max_ms, +-jitter; a Retry-After from the sink replaces it. Forever. A
// probe that succeeds during a backoff (not a Retry-After) ends it early.
// Health: healthy after a commit; degraded from the first failed attempt;
// down after down_after_failures of them in a row. Without a failure streak
// (nothing to deliver) the probe's answer is the health.
#include <cstdint>
#include <memory>

#include <caf/fwd.hpp>

#include "actors/actor_thread.hpp"
#include "messages/drain_protocol.hpp"
#include "wab/dead_letter_store.hpp"
#include "observability/delivery_status.hpp"
#include "sinks/sink.hpp"

namespace weir {

class metrics;

struct sink_runner_settings {
  std::uint32_t concurrency = 4;
  std::uint32_t retry_initial_ms = 100;
  double retry_multiplier = 2.0;
  std::uint32_t retry_max_ms = 30000;
  double retry_jitter = 0.2;
  std::uint32_t health_interval_ms = 5000;
  std::uint32_t down_after_failures = 3;
  std::uint32_t dead_letter_recheck_ms = 1000;  // with the dead letters full, try again this often
  metrics* stats = nullptr;  // may be null (tests)
  std::size_t sink_index = 0;  // which of stats' sinks this runner delivers to
  std::string sink_name = "default";  // for its log lines
  actor_thread worker_thread = actor_thread::own;
};

sink_runner_actor spawn_sink_runner(caf::actor_system& sys, const sink_runner_settings& settings,
                                    std::shared_ptr<sink_factory> factory,
                                    std::shared_ptr<dead_letter_store> dead_letters,
                                    std::shared_ptr<delivery_status> status);

}  // namespace weir
