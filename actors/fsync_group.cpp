#include "actors/fsync_group.hpp"

#include <chrono>
#include <cstring>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/spawn_options.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/failure_log.hpp"
#include "actors/segment_sync.hpp"
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
      const int rc = timed_sync(*req.segment, settings_.stats);
      results.emplace_back(seg, rc);
    }
    std::uint64_t released = 0, requests = 0;
    for (const auto& req : batch) {
      requests += req.acks.size();
      for (const auto& a : req.acks) released += a.records;
    }
    count_released(settings_.stats, released);
    for (auto& req : batch) {
      int rc = 0;
      for (const auto& r : results)
        if (r.first == req.segment.get()) rc = r.second;
      answer_synced(self_, req.acks, rc, requests == 1, &settings_.replication);
    }
    if (settings_.load) settings_.load->answered_by_group(requests);
  }

  bool idle() const { return waiting_.empty(); }
  const replication_route& replication() const { return settings_.replication; }

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
      [=](synced_acks& done) { answer_synced(self, done.acks, done.rc, /*direct=*/true, &self->state.replication()); },
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
