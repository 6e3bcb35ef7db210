#include "actors/sink_worker.hpp"

#include <chrono>

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/spawn_options.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/failure_log.hpp"
#include "messages/drain_protocol.hpp"
#include "observability/metrics.hpp"

namespace weir {

namespace {

class sink_worker_state {
 public:
  static inline const char* name = "sink_worker";

  void init(std::shared_ptr<sink_factory> factory, std::shared_ptr<dead_letter_store> dead_letters, sink_metrics* stats) {
    factory_ = std::move(factory);
    dead_letters_ = std::move(dead_letters);
    stats_ = stats;
  }

  commit_outcome commit(const commit_job& job) {
    const auto started = std::chrono::steady_clock::now();
    commit_outcome out = attempt(job);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (stats_ && out.what == commit_outcome::kind::committed) {
      const auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::system_clock::now().time_since_epoch()).count();
      for (const auto& r : *job.records) stats_->delivery_latency.observe(static_cast<double>(now_ns - r.ts_ns) / 1e9);
    }
    return out;
  }

 private:
  commit_outcome attempt(const commit_job& job) {
    commit_outcome out;
    if (!ready(out.error)) {
      out.what = commit_outcome::kind::transient;
      return out;
    }
    auto r = sink_->commit(*job.records);
    if (r.kind == commit_result::outcome::transient) {
      out.what = commit_outcome::kind::transient;
      out.error = std::move(r.error);
      if (r.retry_after) out.retry_after_ms = r.retry_after->count();
      out.sink_answered = r.answered;
      // The records it settled stay settled once their refusals are stored;
      // if those cannot be, the whole batch goes again, and the reason is
      // the dead letters' (full: the runner's recheck, not the sink's backoff).
      if (r.settled == 0) return out;
      std::string error;
      const auto stored = store_dead_letters(job, r.rejected, error);
      if (stored == commit_outcome::kind::committed) {
        out.settled = r.settled;
        out.dead_lettered = r.rejected.size();
      } else {
        out.what = stored;
        out.error = error;
      }
      return out;
    }
    out.what = store_dead_letters(job, r.rejected, out.error);
    if (out.what == commit_outcome::kind::committed) out.dead_lettered = r.rejected.size();
    return out;
  }

  /// Stores the refused records as dead letters: committed (stored, or none
  /// to store), dead_letter_full, or transient (`error` says why).
  commit_outcome::kind store_dead_letters(const commit_job& job,
                                          const std::vector<std::pair<std::size_t, std::string>>& rejected,
                                          std::string& error) {
    std::vector<dead_letter> letters;
    for (const auto& [pos, reason] : rejected) letters.push_back({&job.records->at(pos), reason});
    if (letters.empty()) return commit_outcome::kind::committed;
    auto stored = dead_letters_->store(letters, error);
    if (stored == dead_letter_store::result::full) {
      dead_letters_->rescan();  // an operator may have made room
      stored = dead_letters_->store(letters, error);
    }
    if (stored == dead_letter_store::result::full) {
      error = "dead letters are over drain.dead_letter_max_bytes";
      return commit_outcome::kind::dead_letter_full;
    }
    return stored == dead_letter_store::result::failed ? commit_outcome::kind::transient
                                                       : commit_outcome::kind::committed;
  }

 public:
  /// The sink's health, and why it is not healthy.
  caf::result<sink_health, std::string> probe() {
    std::string why;
    const sink_health health = ready(why) ? sink_->probe(why) : sink_health::down;
    return caf::result<sink_health, std::string>(health, std::move(why));
  }

 private:
  /// The sink is made lazily and remade after a failure to make it.
  bool ready(std::string& error) {
    if (sink_) return true;
    try {
      sink_ = factory_->make();
      return true;
    } catch (const std::exception& e) {
      error = e.what();
      return false;
    }
  }

  std::shared_ptr<sink_factory> factory_;
  std::shared_ptr<dead_letter_store> dead_letters_;
  std::unique_ptr<sink> sink_;
  sink_metrics* stats_ = nullptr;
};

sink_worker_actor::behavior_type sink_worker_behavior(sink_worker_actor::stateful_pointer<sink_worker_state> self,
                                                      std::shared_ptr<sink_factory> factory,
                                                      std::shared_ptr<dead_letter_store> dead_letters, sink_metrics* stats) {
  log_exceptions(self, "sink_worker");
  self->state.init(std::move(factory), std::move(dead_letters), stats);
  return {
      [=](const commit_job& job) { return self->state.commit(job); },
      [=](probe_atom) { return self->state.probe(); },
  };
}

}  // namespace

sink_worker_actor spawn_sink_worker(caf::actor_system& sys, std::shared_ptr<sink_factory> factory,
                                    std::shared_ptr<dead_letter_store> dead_letters, sink_metrics* stats,
                                    actor_thread thread) {
  return spawn_on(sys, thread, sink_worker_behavior, std::move(factory), std::move(dead_letters), stats);
}

}  // namespace weir
