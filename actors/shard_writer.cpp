#include "actors/shard_writer.hpp"

#include <chrono>
#include <optional>
#include <cstring>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/spawn_options.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/failure_log.hpp"
#include "actors/reply_queue.hpp"
#include "actors/segment_sync.hpp"
#include "messages/drain_protocol.hpp"
#include "messages/ingest_protocol.hpp"
#include "wire/batch.hpp"
#include "wire/coordinate.hpp"
#include "wire/frame.hpp"
#include "observability/log.hpp"
#include "observability/metrics.hpp"
#include "wab/segment_writer.hpp"
#include "wab/wall_clock.hpp"

namespace weir {

namespace {

using wab::wall_clock_ns;


std::vector<byte_span> records_of(const ingest_request& req) {
  if (req.kind != ingest_kind::batch) return {byte_span(req.body)};
  std::vector<byte_span> out;
  out.reserve(req.bounds.size() / 2);
  for (std::size_t i = 0; i + 1 < req.bounds.size(); i += 2)
    out.emplace_back(req.body.data() + req.bounds[i], req.bounds[i + 1]);
  return out;
}

/// The reply when none of the request's records is durable at its tier.
byte_buffer failure_reply(const ingest_request& req) {
  if (req.kind == ingest_kind::batch) return wire::encode_ack_batch(std::vector<bool>(req.record_count(), false));
  return wire::encode_nack(wire::nack_reason::internal_error);
}

/// The reply once the first `landed` records hold at the request's tier.
byte_buffer success_reply(const ingest_request& req, const std::string& segment, std::uint64_t first_index,
                          std::size_t landed) {
  switch (req.kind) {
    case ingest_kind::batch: {
      std::vector<bool> bits(req.record_count(), false);
      for (std::size_t i = 0; i < landed; ++i) bits[i] = true;
      return wire::encode_ack_batch(bits);
    }
    case ingest_kind::tracked: {
      wire::record_coordinate c;
      c.index = first_index;
      c.segment = segment;
      c.id = wire::compute_record_id(c.segment, c.index, req.body);
      return wire::encode_ack_tracked(c);
    }
    case ingest_kind::push:
      break;
  }
  return wire::encode_ack();
}

class shard_writer_state {
  using wab_outcome = outcome<std::shared_ptr<wab::segment_writer>, int>;

 public:
  static inline const char* name = "shard_writer";

  using pointer = shard_writer_actor::stateful_pointer<shard_writer_state>;

  /// Its states (shard_writer.hpp), each with its behaviour.
  enum class mode { online, offline, shutting_down };

  /// An open segment: requests are queued and written in groups.
  shard_writer_actor::behavior_type online() {
    return {
        [this](ingest_request& req) { enqueue(req); },
        [this](flush_atom) { write_queued(true); },
        [this](retry_open_atom) { retry_scheduled_ = false; },  // set before the shard came back
        [](started_atom) { return done_atom::value; },  // init has run: its first segment was tried
        [this](shutdown_atom) { return shut_down(); },
    };
  }

  /// No segment can be made: every request gets the failure reply at once;
  /// a timer tries again.
  shard_writer_actor::behavior_type offline() {
    return {
        [this](ingest_request& req) { refuse(req); },
        [this](flush_atom) { write_queued(true); },  // what was queued when it went offline
        [this](retry_open_atom) { on_retry_open(); },
        [](started_atom) { return done_atom::value; },
        [this](shutdown_atom) { return shut_down(); },
    };
  }

  /// Sealed, waiting for the fsync group's last syncs: nothing more is written.
  shard_writer_actor::behavior_type shutting_down() {
    return {
        [this](ingest_request& req) { refuse(req); },
        [](flush_atom) {},
        [this](retry_open_atom) { retry_scheduled_ = false; },
        [](started_atom) { return done_atom::value; },
        [](shutdown_atom) { return done_atom::value; },
    };
  }

  /// The behaviour for the state init left it in.
  shard_writer_actor::behavior_type first_behavior() { return mode_ == mode::offline ? offline() : online(); }

  void init(pointer self, shard_writer_settings s, fsync_group_actor fsync_group) {
    self_ = self;
    settings_ = std::move(s);
    fsync_ = std::move(fsync_group);
    self_->link_to(fsync_);  // neither outlives the other: acks need both
    next_sequence_ = settings_.first_sequence;
    open_segment();
    // Up (and so ready, unless offline) only once the first segment was
    // tried: before that, readiness would say yes for a shard that is
    // about to find its disk full.
    if (settings_.stats) settings_.stats->writer_up = true;
  }

  void enqueue(ingest_request& req) {
    auto to = req.reply_to;
    if (!settings_.usage->admit(req.record_count())) {
      deliver_reply(self_, req.replies, to, ingest_reply{req.tag, failure_reply(req)}, /*direct=*/true);
      return;
    }
    queued_records_ += req.record_count();
    queued_bytes_ += req.body.size();
    if (!req.durable) last_buffered_ = std::chrono::steady_clock::now();
    queue_.push_back({std::move(to), std::move(req)});
    if (queued_records_ >= settings_.max_group_records || queued_bytes_ >= settings_.max_group_bytes) {
      write_queued(false);
    } else if (!flush_scheduled_) {
      // Everything already in the mailbox is taken before this message comes
      // back, so requests that arrived together share one write.
      flush_scheduled_ = true;
      self_->send(self_, flush_atom::value);
    }
  }

  /// `flushing`: called for the flush this writer sent itself, behind
  /// every request that was waiting; a group cut at the size limit is not,
  /// and more of the mailbox may be waiting behind it.
  void write_queued(bool flushing) {
    flush_scheduled_ = false;
    if (queue_.empty()) return;
    std::vector<queued> group;
    group.swap(queue_);
    queued_records_ = queued_bytes_ = 0;
    if (!ready_for_append()) {
      for (auto& q : group) reply(q, failure_reply(q.req), 0);
      return;
    }
    std::vector<byte_span> spans;
    for (const auto& q : group)
      for (auto s : records_of(q.req)) spans.push_back(s);
    const std::uint64_t size_before = active_->size();
    const auto written = active_->append(spans, wall_clock_ns());
    settings_.usage->add(active_->size() - size_before);
    if (settings_.stats) settings_.stats->appended.fetch_add(written.landed, std::memory_order_relaxed);
    if (written.error < 0) {
      log::error("WAB write failed; the segment takes no more records",
                 {{"file", active_->path()},
                  {"error", std::strerror(-written.error)},
                  {"records_written", std::to_string(written.landed)},
                  {"records_refused", std::to_string(spans.size() - written.landed)}});
    }
    answer(group, written, flushing);
    // Buffered writes go through the notice like Durable ones: a message
    // for each woke the drain to read that one record, on the CPU that
    // takes the producer's next frame (decision 0012).
    announce(written.landed);
    if (active_->append_closed() || active_->size() >= settings_.segment_max_bytes) rotate();
    else if (!spare_asked_ && active_->size() >= settings_.segment_max_bytes / 2) ask_for_spare();
  }

  /// Writes what is queued and seals the active segment, then answers once
  /// the fsync_group has answered the shutdown that follows: every sync has
  /// returned.
  caf::typed_response_promise<done_atom> shut_down() {
    write_queued(false);
    if (active_) {
      seal_active("shutdown");
      active_.reset();
    }
    become(mode::shutting_down);
    auto promise = self_->make_response_promise<done_atom>();
    auto* self = self_;
    self_->request(fsync_, caf::infinite, shutdown_atom::value)
        .then(
            [=](done_atom) mutable {
              promise.deliver(done_atom::value);
              self->quit();
            },
            [=](caf::error&) mutable {  // the fsync_group is gone: nothing left to wait for
              promise.deliver(done_atom::value);
              self->quit();
            });
    return promise;
  }

  /// Offline: try to create a segment again, without waiting for a push, so
  /// that the shard (and readiness) comes back as soon as space does.
  void on_retry_open() {
    retry_scheduled_ = false;
    if (!active_) open_segment();
  }

 private:
  struct queued {
    ingest_client_actor to;
    ingest_request req;
  };

  /// The failure reply, at once (offline, or stopping).
  void refuse(ingest_request& req) {
    auto to = req.reply_to;
    deliver_reply(self_, req.replies, to, ingest_reply{req.tag, failure_reply(req)}, /*direct=*/true);
  }

  /// (During init the behaviour set here is replaced by first_behavior(),
  /// which is the same.)
  void become(mode m) {
    if (m == mode_) return;
    mode_ = m;
    switch (m) {
      case mode::online: self_->become(online()); break;
      case mode::offline: self_->become(offline()); break;
      case mode::shutting_down: self_->become(shutting_down()); break;
    }
  }

  /// Straight into the connection's reply queue (deliver_reply), not by
  /// message to its connection actor: one wake-up less per reply
  /// (decision 0004).
  void reply(queued& q, byte_buffer frame, std::uint32_t acked) {
    deliver_reply(self_, q.req.replies, q.to, ingest_reply{q.req.tag, std::move(frame), acked}, /*direct=*/true);
  }

  /// Buffered requests are answered now; Durable ones travel to the
  /// fsync_group with both possible replies prepared, or are synced here.
  void answer(std::vector<queued>& group, const wab::append_result& written, bool flushing) {
    std::size_t position = 0;
    bool buffered_acked = false;
    sync_request durable{active_, {}};
    for (auto& q : group) {
      const std::size_t n = q.req.record_count();
      const std::size_t landed = written.landed > position ? std::min(n, written.landed - position) : 0;
      const std::uint64_t first_index = written.first_index + position;
      position += n;
      if (landed == 0) {
        reply(q, failure_reply(q.req), 0);
      } else if (!q.req.durable) {
        buffered_acked = true;
        reply(q, success_reply(q.req, settings_.segment_prefix + active_->name(), first_index, landed), static_cast<std::uint32_t>(landed));
      } else {
        durable.acks.push_back({std::move(q.to), std::move(q.req.replies), q.req.tag, static_cast<std::uint32_t>(landed),
                                success_reply(q.req, settings_.segment_prefix + active_->name(), first_index, landed),
                                failure_reply(q.req), q.req.replicated ? active_->sequence() : 0,
                                q.req.replicated ? written.end_offset : 0});
      }
    }
    if (buffered_acked && settings_.buffered) settings_.buffered->note_ack();
    if (durable.acks.empty()) return;
    if (sync_here(flushing)) {
      std::uint64_t records = 0;
      bool replicated = false;
      for (const auto& a : durable.acks) {
        records += a.records;
        replicated = replicated || a.replicate_end > 0;
      }
      const int rc = timed_sync(*active_, settings_.stats);
      count_released(settings_.stats, records);
      // With more waiting for this thread, the idle fsync group writes these
      // replies while this thread writes and syncs the next group: written
      // here, one socket write per reply stood between a sync and the next
      // (decision 0022). Not a group with Replicated acks: the replicator
      // takes its waits in the order of the syncs, which a later group
      // answered here could overtake.
      // Handed over even while the group still writes an earlier hand-off's
      // replies: answering here instead measured slower (decision 0022).
      if (!self_->mailbox().empty() && !replicated) {
        settings_.sync_load->replies_handed();
        self_->send(fsync_, synced_acks{std::move(durable.acks), rc});
      } else {
        answer_synced(self_, durable.acks, rc, /*direct=*/true, &settings_.replication);
      }
      return;
    }
    if (settings_.sync_load) settings_.sync_load->handed_to_group(durable.acks.size());
    self_->send(fsync_, std::move(durable));
  }

  /// Whether to sync right here instead of handing the acks to the fsync
  /// group, which must be idle (its syncs and these then never overlap):
  /// - nothing else waits for this thread: the hand-off would only add a
  ///   thread wake-up to the ack (a lone producer's case);
  /// - or, for the group of a flush (`flushing`: what waited is written),
  ///   the shard has had no Buffered push for `buffered_quiet`: what
  ///   arrives meanwhile waits for this sync and is written right after it,
  ///   as one group (`sync_durable_only_here`). With only Durable pushes
  ///   that costs less CPU than writing beside the group's syncs: one
  ///   hand-off less per group (decision 0017).
  /// While Buffered pushes come, the group syncs and this thread goes on
  /// writing, so a Buffered push waits behind no sync; the first one after
  /// a quiet spell may wait for one.
  bool sync_here(bool flushing) {
    if (!settings_.sync_load || !settings_.sync_load->group_idle()) return false;
    if (self_->mailbox().empty()) return true;
    return flushing && settings_.sync_durable_only_here &&
           (!last_buffered_ || std::chrono::steady_clock::now() - *last_buffered_ >= settings_.buffered_quiet);
  }

  /// Tells the drain how far the active segment is readable: through the
  /// notice, and by message when the drain waits for one or `new_segment`.
  /// A new segment is always announced by message: the drain learns the
  /// segments, and that the previous one is closed, from messages, in the
  /// order they were made.
  void announce(std::uint64_t records, bool new_segment = false) {
    for (const auto& [drain, notice] : settings_.drains) {
      const bool wanted = !notice || notice->publish(active_->sequence(), active_->size(), records);
      if (wanted || new_segment) self_->send(drain, appended_atom::value, active_->sequence(), active_->size());
    }
    if (settings_.replicator)
      self_->send(settings_.replicator, appended_atom::value, active_->sequence(), active_->size(), active_->records());
  }

  /// Offline (no active segment), the retry timer alone brings the shard
  /// back: a push does not try again, so a flood of refused pushes cannot
  /// turn into a flood of failing creates.
  bool ready_for_append() {
    if (active_ && !active_->append_closed()) return true;
    if (active_) rotate();
    return active_ != nullptr;
  }

  /// Closes the active segment for appends and starts the next one. The old
  /// segment is sealed (its Buffered tail synced, its extent recorded so that
  /// recovery need not read it), and the drain learns it is final (it may go
  /// once delivered, even if no next segment can be made).
  void rotate() {
    active_->close_for_append();
    // Sealed before the next segment takes a record: then only the newest
    // segment can be unsealed after a crash. (Once per segment: cheap.)
    seal_active("rotation");
    for (const auto& [drain, notice] : settings_.drains) {
      if (notice) notice->retire(active_->sequence());
      self_->send(drain, sealed_atom::value, active_->sequence(), active_->size());
    }
    if (settings_.replicator) self_->send(settings_.replicator, sealed_atom::value, active_->sequence(), active_->size());
    active_.reset();
    open_segment();
  }

  /// Starts the next segment: in a spare when one is ready (its blocks are
  /// already written, so no room is needed), else in a new file, only with
  /// min_free_bytes free: a new segment needs just a page, which a truncated
  /// failed write may just have freed, and taking records on that would fail
  /// the very next write while readiness said all was well.
  void open_segment() {
    std::optional<std::string> spare = settings_.spares ? settings_.spares->take() : std::nullopt;
    std::shared_ptr<wab::segment_writer> made;
    bool spare_failed = false;
    if (spare) {
      auto created = create_segment(*spare);
      if (created) made = std::move(created).value();
      else log::warn("a spare WAB segment could not be used; starting a new file instead",
                     {{"spare", *spare}, {"error", std::strerror(-created.error())}});
      spare_failed = !created;
    }
    if (!made) {
      const std::int64_t free = settings_.io->free_bytes(settings_.shard_dir);
      if (free >= 0 && static_cast<std::uint64_t>(free) < settings_.min_free_bytes) {
        go_offline("the disk holding the WAB is full (a segment is started with " +
                   std::to_string(settings_.min_free_bytes) + " bytes free, there are " + std::to_string(free) + ")");
        return;
      }
      auto created = create_segment({});
      if (!created) {
        go_offline(std::string("cannot create a segment: ") + std::strerror(-created.error()));
        return;
      }
      made = std::move(created).value();
    }
    active_ = std::move(made);
    active_in_spare_ = spare.has_value() && active_ != nullptr;
    spare_asked_ = false;
    settings_.usage->add(active_->size());
    announce(0, /*new_segment=*/true);
    if (mode_ == mode::offline)
      log::info("WAB shard back online", {{"shard", std::to_string(settings_.shard)}, {"segment", active_->name()}});
    become(mode::online);
    if (settings_.stats) settings_.stats->offline = false;
    // A growing segment wants a spare now; one in a spare asks once it is
    // half full (write_queued), so a restart that found a spare does not
    // write another segment's worth of zeros before any record needs it.
    // (Not after a spare failed: the next ready one would make this growing
    // segment rotate at once, and a spare that keeps failing would cost a
    // sequence and a segment's worth of zeros each time.)
    if (!active_in_spare_ && !spare_failed) ask_for_spare();
    spare_asked_ = spare_asked_ || spare_failed;
  }

  /// Numbers the segment: a sequence is never reused, even one whose
  /// creation failed half-way.
  wab_outcome create_segment(const std::string& spare) {
    return wab::segment_writer::create(settings_.io, settings_.shard_dir, settings_.shard, next_sequence_++,
                                       wall_clock_ns(), {}, spare);
  }

  /// Asks the preparer to refill the spare pool. When a spare is ready and
  /// the active segment is one that grows as it is written (none was ready
  /// when it started), the writer moves onto the spare at once; an offline
  /// shard starts a segment in it.
  void ask_for_spare() {
    spare_asked_ = true;
    if (!settings_.preparer || preparing_) return;
    preparing_ = true;
    self_->request(settings_.preparer, caf::infinite, prepare_atom::value)
        .then(
            [this](spare_ready_atom) {
              preparing_ = false;
              if (mode_ == mode::shutting_down) return;
              if (!active_) open_segment();
              else if (!active_in_spare_ && !active_->append_closed()) rotate();
            },
            [this](caf::error&) { preparing_ = false; });
  }

  void seal_active(const char* when) {
    if (int rc = active_->seal(); rc < 0)
      log::error(std::string("WAB seal at ") + when + " failed; nothing the segment held unacked is acked",
                 {{"file", active_->path()}, {"error", std::strerror(-rc)}});
  }

  std::chrono::milliseconds retry_interval() const { return std::chrono::milliseconds(settings_.segment_retry_ms); }

  /// Every push is refused until a retry (on a timer, not waiting for a push) succeeds.
  void go_offline(const std::string& why) {
    ask_for_spare();  // ready once there is room: the shard then starts a segment in it
    if (!retry_scheduled_) {
      retry_scheduled_ = true;
      self_->delayed_send(self_, retry_interval(), retry_open_atom::value);
    }
    if (mode_ != mode::offline || why != offline_reason_)
      log::error("WAB shard offline; every push to it is refused until this clears",
                 {{"shard", std::to_string(settings_.shard)}, {"dir", settings_.shard_dir}, {"why", why}});
    offline_reason_ = why;
    become(mode::offline);
    if (settings_.stats) settings_.stats->offline = true;
  }

  pointer self_ = nullptr;
  shard_writer_settings settings_;
  fsync_group_actor fsync_;

 public:
  ~shard_writer_state() {
    if (settings_.stats) settings_.stats->writer_up = false;
  }

 private:
  std::shared_ptr<wab::segment_writer> active_;
  bool active_in_spare_ = false;  // else it grows as it is written
  bool preparing_ = false;        // a prepare request is out
  bool spare_asked_ = false;      // for the active segment
  std::uint64_t next_sequence_ = 1;
  std::vector<queued> queue_;
  std::optional<std::chrono::steady_clock::time_point> last_buffered_;  // the last Buffered push queued
  std::uint64_t queued_records_ = 0, queued_bytes_ = 0;
  bool flush_scheduled_ = false;
  mode mode_ = mode::online;  // the behaviour in use
  std::string offline_reason_;
  bool retry_scheduled_ = false;
};

shard_writer_actor::behavior_type shard_writer_behavior(shard_writer_state::pointer self, shard_writer_settings s,
                                                        fsync_group_actor fsync_group) {
  log_exceptions(self, "shard_writer");
  self->state.init(self, std::move(s), std::move(fsync_group));
  return self->state.first_behavior();
}

}  // namespace

shard_writer_actor spawn_shard_writer(caf::actor_system& sys, shard_writer_settings settings,
                                      fsync_group_actor fsync_group) {
  const auto thread = settings.thread;
  return spawn_on(sys, thread, shard_writer_behavior, std::move(settings), std::move(fsync_group));
}

}  // namespace weir
