#include "actors/sink_runner.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/sink_worker.hpp"
#include "actors/failure_log.hpp"
#include "messages/drain_protocol.hpp"
#include "observability/log.hpp"
#include "observability/metrics.hpp"
#include "wab/wall_clock.hpp"

namespace weir {

namespace {

struct job {
  delivery_client_actor drain;
  std::uint64_t batch_id = 0;
  std::shared_ptr<std::vector<sink_record>> batch;  // the workers read it; it goes back to the drain
  std::uint64_t records = 0;
  std::uint64_t attempt = 0;  // the runner's attempt when it was dispatched
};

class sink_runner_state {
 public:
  static inline const char* name = "sink_runner";

  using pointer = sink_runner_actor::stateful_pointer<sink_runner_state>;
  /// Its states (sink_runner.hpp), each with its behaviour.
  enum class mode { delivering, backing_off, dead_letters_full };

  void init(pointer self, sink_runner_settings s, std::shared_ptr<sink_factory> factory,
            std::shared_ptr<dead_letter_store> dead_letters, std::shared_ptr<delivery_status> status) {
    self_ = self;
    settings_ = s;
    status_ = std::move(status);
    type_ = factory->type();
    for (std::uint32_t i = 0; i < std::max(1u, s.concurrency); ++i) {
      workers_.push_back(spawn_sink_worker(self->system(), factory, dead_letters,
                                           s.stats ? &s.stats->sink(s.sink_index) : nullptr, s.worker_thread));
      self->link_to(workers_.back());
      idle_.push_back(true);
    }
    schedule_probe();
  }

  /// Commits run on the workers as they come.
  sink_runner_actor::behavior_type delivering() {
    return {
        [this](delivery_batch& b) {
          enqueue(b);
          dispatch();
        },
        [](retry_atom, std::uint64_t) {},  // the timer of a wait that a probe cut short
        [this](probe_atom, std::uint64_t epoch) { on_probe(epoch); },
    };
  }

  /// After a failed attempt, or with the dead letters full: batches queue,
  /// nothing is dispatched until the timer says so (or, when the sink could
  /// not be reached, a probe that reaches it).
  sink_runner_actor::behavior_type waiting() {
    return {
        [this](delivery_batch& b) { enqueue(b); },
        [this](retry_atom, std::uint64_t epoch) {
          if (epoch == retry_epoch_) resume();
        },
        [this](probe_atom, std::uint64_t epoch) { on_probe(epoch); },
    };
  }

  void enqueue(delivery_batch& b) {
    const std::uint64_t n = b.records.size();
    job j{b.reply_to, b.id, std::make_shared<std::vector<sink_record>>(std::move(b.records)), n};
    queue_.emplace(next_job_++, std::move(j));
  }

  void on_probe(std::uint64_t epoch) {
    if (epoch != probe_epoch_) return;
    schedule_probe();
    for (std::size_t w = 0; w < workers_.size(); ++w) {
      if (!idle_[w]) continue;  // a busy worker is proof enough that the sink is being used
      idle_[w] = false;
      self_->request(workers_[w], caf::infinite, probe_atom::value).then([=, this](sink_health health, std::string why) {
        idle_[w] = true;
        probed(health, why);
        dispatch();
      });
      return;
    }
  }

 private:
  /// Sends queued batches to idle workers (only while delivering: a
  /// worker's answer can come in any state).
  void dispatch() {
    while (mode_ == mode::delivering && !queue_.empty()) {
      std::size_t w = 0;
      while (w < workers_.size() && !idle_[w]) ++w;
      if (w == workers_.size()) break;
      auto it = queue_.begin();
      const std::uint64_t key = it->first;
      job j = std::move(it->second);
      queue_.erase(it);
      idle_[w] = false;
      j.attempt = attempt_;
      status_->delivering();
      self_->request(workers_[w], caf::infinite, commit_job{j.batch})
          .then([=, this](commit_outcome& out) mutable { finished(w, key, std::move(j), out); });
    }
    if (queue_.empty() && mode_ == mode::delivering && all_idle()) status_->idle();
  }

  void finished(std::size_t w, std::uint64_t key, job j, const commit_outcome& out) {
    idle_[w] = true;
    if (settings_.stats) {
      auto& m = settings_.stats->sink(settings_.sink_index);
      m.commit_duration->Observe(out.seconds);
      const bool whole = out.what == commit_outcome::kind::committed;
      const std::uint64_t settled = whole ? j.records : out.settled;
      m.committed->Increment(static_cast<double>(settled - out.dead_lettered));
      m.dead_lettered->Increment(static_cast<double>(out.dead_lettered));
      if (!whole) m.retried->Increment(static_cast<double>(j.records - out.settled));
    }
    if (out.what == commit_outcome::kind::committed) {
      succeeded();
      status_->settled(j.records, out.dead_lettered, true);
      if (out.dead_lettered > 0)
        log::warn("records refused by the sink were dead-lettered",
                  {{"sink", settings_.sink_name}, {"sink_type", type_}, {"records", std::to_string(out.dead_lettered)}});
      self_->send(j.drain, delivered_atom::value, j.batch_id, spent_batch{std::move(j.batch)});
      dispatch();
      return;
    }
    // The batch goes back first in line; nothing else is sent until the wait is over.
    const bool counted = mode_ == mode::delivering && j.attempt == attempt_;
    if (out.what != commit_outcome::kind::dead_letter_full) dead_letters_full_logged_ = false;
    if (out.settled > 0) settle_front(j, out);
    queue_.emplace(key, std::move(j));
    status_->commit_failed(out.error);
    if (!counted) {
      // Another slot's commit of the same attempt failed first: that one
      // started the wait. Sent before it (an older attempt): it goes again.
      dispatch();
      return;
    }
    wait(out.what == commit_outcome::kind::dead_letter_full ? mode::dead_letters_full : mode::backing_off);
    if (out.what == commit_outcome::kind::dead_letter_full) {
      // Not the sink failing: a record it refused has nowhere to go. Rechecked
      // on its own timer; the health and the backoff stay as they are.
      status_->dead_letters_full(settings_.dead_letter_recheck_ms);
      if (!dead_letters_full_logged_) {
        dead_letters_full_logged_ = true;
        log::warn("delivery stopped: dead letters are full",
                  {{"sink", settings_.sink_name}, {"sink_type", type_}, {"error", out.error}, {"recheck_ms", std::to_string(settings_.dead_letter_recheck_ms)}});
      }
      probe_may_resume_ = false;
      self_->delayed_send(self_, std::chrono::milliseconds(settings_.dead_letter_recheck_ms), retry_atom::value,
                          ++retry_epoch_);
      return;
    }
    if (failures_++ == 0) streak_started_ = std::chrono::steady_clock::now();
    const auto wait = backoff(out.retry_after_ms);
    status_->retrying(static_cast<std::uint64_t>(wait.count()));
    set_health(failures_ >= settings_.down_after_failures || status_->health() == sink_health::down
                   ? sink_health::down
                   : sink_health::degraded);
    // One line when trouble starts or changes, then one per doubling of the
    // streak: visible, not a flood.
    if ((failures_ & (failures_ - 1)) == 0 || out.error != last_logged_error_) {
      last_logged_error_ = out.error;
      log::warn("sink commit failed; retrying", {{"sink", settings_.sink_name}, {"sink_type", type_},
                                                  {"error", out.error},
                                                  {"failures", std::to_string(failures_)},
                                                  {"health", std::string(name_of(status_->health()))},
                                                  {"retry_in_ms", std::to_string(wait.count())}});
    }
    // A probe that connects ends the wait only when the sink could not be
    // reached: not when it answered with the failure (an HTTP 503 comes from
    // a server that accepts connections) nor when it asked for the wait.
    probe_may_resume_ = out.retry_after_ms < 0 && !out.sink_answered;
    self_->delayed_send(self_, wait, retry_atom::value, ++retry_epoch_);
  }

  /// A failed commit got its first records through (stored or refused for
  /// good): only the rest go again, and the sink, moving, starts its
  /// failure streak over — its next wait is the first step of the backoff,
  /// not the next doubling. The batch is confirmed to its drain only whole.
  void settle_front(job& j, const commit_outcome& out) {
    auto& records = *j.batch;
    records.erase(records.begin(), records.begin() + static_cast<std::ptrdiff_t>(out.settled));
    j.records -= out.settled;
    status_->settled(out.settled, out.dead_lettered, false);
    if (out.dead_lettered > 0)
      log::warn("records refused by the sink were dead-lettered",
                {{"sink", settings_.sink_name}, {"sink_type", type_}, {"records", std::to_string(out.dead_lettered)}});
    failures_ = 0;
  }

  /// Stops dispatching until the wait is over.
  void wait(mode why) {
    mode_ = why;
    self_->become(waiting());
  }

  /// The wait is over (or cut short): the next dispatch is a new attempt.
  void resume() {
    mode_ = mode::delivering;
    self_->become(delivering());
    ++attempt_;
    dispatch();
  }

  /// A commit went through: the streak (if any) is over.
  void succeeded() {
    const bool streak_ended = failures_ > 0;
    if (streak_ended) {
      const double after_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - streak_started_).count();
      char after[32];
      std::snprintf(after, sizeof after, "%.1f", after_s);
      log::info("sink healthy again",
                {{"sink", settings_.sink_name}, {"sink_type", type_},
                 {"after_s", after},
                 {"failed_attempts", std::to_string(failures_)},
                 {"records_waiting", std::to_string(records_waiting())}});
    } else if (status_->health() != sink_health::healthy) {
      log::info("sink healthy", {{"sink", settings_.sink_name}, {"sink_type", type_}});
    }
    // Clears a failed probe's reason too.
    status_->commit_went_through(wab::wall_clock_ns(), streak_ended);
    failures_ = 0;
    dead_letters_full_logged_ = false;
    last_logged_error_.clear();
  }

  /// A probe's answer: the health itself when nothing is failing; during a
  /// failure streak only a hint that the wait may end now.
  void probed(sink_health h, const std::string& why) {
    if (failures_ == 0) {
      // What status and the dashboard show as the last error, too: with
      // nothing to deliver, no commit tells it.
      status_->probe_answered(h, why);
      set_health(h, why);
      return;
    }
    if (h == sink_health::healthy && mode_ == mode::backing_off && probe_may_resume_) {
      ++retry_epoch_;  // the pending retry timer is void
      log::info("sink answers its health probe; retrying now", {{"sink", settings_.sink_name}, {"sink_type", type_}});
      resume();
    }
  }

  /// Records not yet confirmed by the sink, every shard (what the drains have
  /// read and what they have not).
  std::uint64_t records_waiting() const {
    std::uint64_t waiting = 0;
    if (auto* m = settings_.stats) return m->lag(settings_.sink_index);
    for (const auto& [key, j] : queue_) waiting += j.records;
    return waiting;
  }

  std::chrono::milliseconds backoff(std::int64_t retry_after_ms) {
    if (retry_after_ms >= 0) return std::chrono::milliseconds(retry_after_ms);
    double ms = settings_.retry_initial_ms * std::pow(settings_.retry_multiplier, static_cast<double>(failures_ - 1));
    ms = std::min(ms, static_cast<double>(settings_.retry_max_ms));
    std::uniform_real_distribution<double> spread(1.0 - settings_.retry_jitter, 1.0 + settings_.retry_jitter);
    return std::chrono::milliseconds(static_cast<std::int64_t>(std::max(1.0, ms * spread(rng_))));
  }

  /// `why`: the probe's reason, when a probe found the sink down.
  void set_health(sink_health h, const std::string& why = {}) {
    const auto before = status_->set_health(h);
    if (before == h) return;
    if (h == sink_health::healthy) log::info("sink healthy", {{"sink", settings_.sink_name}, {"sink_type", type_}});
    else if (h == sink_health::down)
      log::warn("sink down", {{"sink", settings_.sink_name}, {"sink_type", type_}, {"error", why.empty() ? status_->last_error() : why}});
  }

  void schedule_probe() {
    self_->delayed_send(self_, std::chrono::milliseconds(settings_.health_interval_ms), probe_atom::value,
                        ++probe_epoch_);
  }

  bool all_idle() const {
    for (bool i : idle_)
      if (!i) return false;
    return true;
  }

  pointer self_ = nullptr;
  sink_runner_settings settings_;
  std::shared_ptr<delivery_status> status_;
  std::string type_;
  std::vector<sink_worker_actor> workers_;
  std::vector<bool> idle_;
  std::map<std::uint64_t, job> queue_;  // by arrival: a retried batch keeps its place
  std::uint64_t next_job_ = 0;
  std::uint64_t failures_ = 0;  // failed attempts in a row
  std::uint64_t attempt_ = 0;   // one more each time a wait ends
  std::chrono::steady_clock::time_point streak_started_{};
  std::string last_logged_error_;
  mode mode_ = mode::delivering;  // the behaviour in use: delivering(), else waiting()
  bool probe_may_resume_ = false;  // backing off because the sink could not be reached
  bool dead_letters_full_logged_ = false;  // one line per stop, not one per recheck
  std::uint64_t retry_epoch_ = 0, probe_epoch_ = 0;
  std::mt19937_64 rng_{std::random_device{}()};
};

sink_runner_actor::behavior_type sink_runner_behavior(sink_runner_state::pointer self, sink_runner_settings s,
                                                      std::shared_ptr<sink_factory> factory,
                                                      std::shared_ptr<dead_letter_store> dead_letters,
                                                      std::shared_ptr<delivery_status> status) {
  log_exceptions(self, "sink_runner");
  self->state.init(self, s, std::move(factory), std::move(dead_letters), std::move(status));
  return self->state.delivering();
}

}  // namespace

sink_runner_actor spawn_sink_runner(caf::actor_system& sys, const sink_runner_settings& settings,
                                    std::shared_ptr<sink_factory> factory,
                                    std::shared_ptr<dead_letter_store> dead_letters,
                                    std::shared_ptr<delivery_status> status) {
  return sys.spawn(sink_runner_behavior, settings, std::move(factory), std::move(dead_letters), std::move(status));
}

}  // namespace weir
