#include "actors/fsync_group.hpp"

#include <chrono>
#include <cstring>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/spawn_options.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/failure_log.hpp"
#include "messages/ingest_protocol.hpp"
#include "observability/log.hpp"
#include "observability/metrics.hpp"
#include "wab/segment_writer.hpp"

namespace weir {

namespace {

class fsync_group_state {
 public:
  static inline const char* name = "fsync_group";

  using pointer = fsync_group_actor::stateful_pointer<fsync_group_state>;

  void init(pointer self, fsync_group_settings s) {
    self_ = self;
    settings_ = s;
  }

  void enqueue(sync_request& req) {
    for (const auto& a : req.acks) waiting_records_ += a.records;
    waiting_.push_back(std::move(req));
    if (settings_.policy == commit_policy::deadline) {
      if (waiting_records_ >= settings_.max_records) {
        sync_now();
      } else if (!scheduled_) {
        scheduled_ = true;
        self_->delayed_send(self_, std::chrono::microseconds(settings_.max_delay_us), flush_atom::value, epoch_);
      }
    } else if (!scheduled_) {
      scheduled_ = true;
      self_->send(self_, flush_atom::value, epoch_);
    }
  }

  void on_flush(std::uint64_t epoch) {
    if (epoch == epoch_) sync_now();  // else a stale timer: its requests already synced
  }

  /// One fdatasync per segment that has waiting requests (normally one; two
  /// right after a rotation), then every waiting ack is answered.
  void sync_now() {
    ++epoch_;
    scheduled_ = false;
    waiting_records_ = 0;
    std::vector<sync_request> batch;
    batch.swap(waiting_);
    std::vector<std::pair<const wab::segment_writer*, int>> results;
    for (const auto& req : batch) {
      const auto* seg = req.segment.get();
      bool done = false;
      for (const auto& r : results) done = done || r.first == seg;
      if (done) continue;
      // A finished segment answers -EIO at once: nothing on it may be acked.
      const bool already_failed = req.segment->sync_failed();
      const auto started = std::chrono::steady_clock::now();
      const int rc = req.segment->sync();
      if (settings_.stats && !already_failed) {
        settings_.stats->fsync_duration->Observe(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
        if (rc < 0) settings_.stats->fsync_failures->Increment();
      }
      if (rc < 0 && !already_failed)
        log::error("WAB fdatasync failed; the segment is retired and nothing it holds unacked will be acked",
                   {{"file", req.segment->path()}, {"error", std::strerror(-rc)}});
      results.emplace_back(seg, rc);
    }
    if (settings_.stats) {
      std::uint64_t released = 0;
      for (const auto& req : batch)
        for (const auto& a : req.acks) released += a.records;
      if (released > 0) {
        settings_.stats->group_commit_records->Observe(static_cast<double>(released));
        settings_.stats->fsyncs.fetch_add(1, std::memory_order_relaxed);
        settings_.stats->synced_records.fetch_add(released, std::memory_order_relaxed);
      }
    }
    for (auto& req : batch) {
      int rc = 0;
      for (const auto& r : results)
        if (r.first == req.segment.get()) rc = r.second;
      for (auto& a : req.acks)
        self_->send(a.to, rc == 0 ? ingest_reply{a.tag, std::move(a.on_success), a.records}
                                 : ingest_reply{a.tag, std::move(a.on_failure), 0});
    }
  }

  bool idle() const { return waiting_.empty(); }

 private:
  pointer self_ = nullptr;
  fsync_group_settings settings_;
  std::vector<sync_request> waiting_;
  std::uint64_t waiting_records_ = 0;
  std::uint64_t epoch_ = 0;
  bool scheduled_ = false;
};

fsync_group_actor::behavior_type fsync_group_behavior(fsync_group_state::pointer self, fsync_group_settings s) {
  log_exceptions(self, "fsync_group");
  self->state.init(self, s);
  return {
      [=](sync_request& req) { self->state.enqueue(req); },
      [=](flush_atom, std::uint64_t epoch) { self->state.on_flush(epoch); },
      [=](shutdown_atom) {
        if (!self->state.idle()) self->state.sync_now();
        self->quit();
        return done_atom::value;
      },
  };
}

}  // namespace

fsync_group_actor spawn_fsync_group(caf::actor_system& sys, const fsync_group_settings& settings) {
  return spawn_on(sys, settings.thread, fsync_group_behavior, settings);
}

}  // namespace weir
