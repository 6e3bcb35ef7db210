#include "actors/drain.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/spawn_options.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/drain/damage_claims.hpp"
#include "actors/drain/damage_ledger.hpp"
#include "actors/drain/known_segments.hpp"
#include "actors/drain/record_recycler.hpp"
#include "actors/drain/segment_release.hpp"
#include "actors/drain/trouble_log.hpp"
#include "actors/failure_log.hpp"
#include "messages/atoms.hpp"
#include "messages/drain_protocol.hpp"
#include "wire/coordinate.hpp"
#include "observability/log.hpp"
#include "observability/metrics.hpp"
#include "wab/confirm_cursor.hpp"
#include "wab/cursor_trust.hpp"
#include "wab/quarantine.hpp"
#include "wab/segment_reader.hpp"
#include "wab/wall_clock.hpp"

namespace weir {

namespace {

using position = wab::confirm_cursor;  // (segment, offset, index) of a record


using drain_parts::segment_state;

struct in_flight {
  std::uint64_t id;
  position end;  // just past the batch's last record
  bool done = false;
  std::uint64_t records = 0;
  std::int64_t first_ts_ns = 0;  // ingest time of its first record
};

class drain_state {
 public:
  static inline const char* name = "drain";

  using pointer = drain_actor::stateful_pointer<drain_state>;

  void init(pointer self, drain_settings s, batch_consumer_actor runner) {
    self_ = self;
    s_ = std::move(s);
    runner_ = std::move(runner);
    shard_name_ = std::filesystem::path(s_.shard_dir).filename().string();
    trouble_.emplace(s_.shard_dir, s_.cursor_persist_ms);
    damage_.emplace(s_, shard_name_);
    bool damaged = false;
    if (!s_.release) s_.release = std::make_shared<drain_parts::segment_release>(1, s_.usage);
    cursor_file_ = std::make_unique<wab::cursor_file>(s_.io, s_.shard_dir, s_.sink);
    loaded_ = cursor_file_->load(&damaged);
    if (damaged)
      log::error("confirm cursor unreadable; delivering the shard from its first segment (duplicates possible)",
                 {{"dir", s_.shard_dir}, {"sink", s_.sink}});
    // Reserved now, while there is room: every later store overwrites bytes
    // already on disk, so a full disk can still confirm and free segments.
    if (int rc = cursor_file_->reserve(); rc < 0)
      log::error("cannot reserve the confirm cursor file; cursor stores need free space until it is made",
                 {{"dir", s_.shard_dir}, {"error", std::strerror(-rc)}});
    if (list_earlier_segments()) start_from_cursor();
  }

  /// Takes up the stored cursor once the segments earlier runs left are
  /// known; until then nothing is read, confirmed or deleted.
  void start_from_cursor() {
    listed_ = true;
    distrust_cursor_past_segments();
    if (loaded_ && s_.sink_index == 0) {
      // Delivered before the last stop, their deletion cut short: said, since they go now.
      std::uint64_t passed = 0;
      for (const auto& [seq, st] : segments_) passed += seq < loaded_->sequence;
      if (passed > 0)
        log::info("WAB segments the stored confirm cursor has passed are deleted (delivered before the last stop)",
                  {{"dir", s_.shard_dir}, {"segments", std::to_string(passed)},
                   {"cursor_segment", std::to_string(loaded_->sequence)}});
    }
    cursor_ = loaded_ ? *loaded_ : position{segments_.empty() ? 0 : segments_.begin()->first};
    stored_ = loaded_ ? *loaded_ : position{};
    // Stepping over segments that are empty or delivered moves the cursor:
    // it is made durable before any of them is deleted, or a crash could
    // leave neither the segments nor a cursor past them, and their numbers
    // (and so their record ids) would be handed out again.
    normalise_cursor();
    persist_cursor();
    read_ = cursor_;
    if (s_.progress) {
      std::uint64_t backlog = 0;
      for (const auto& [seq, records] : s_.recovered_records)
        if (seq >= cursor_.sequence) backlog += records;
      if (s_.recovered_records.count(cursor_.sequence)) backlog -= std::min(backlog, cursor_.index - 1);
      s_.progress->backlog = backlog;
    }
  }

  void on_appended(std::uint64_t seq, std::uint64_t end) {
    for (auto& [s, st] : segments_)
      if (s < seq) st.closed = true;
    auto& st = segments_[seq];
    st.end = std::max(st.end, end);
    if (listed_ && read_.sequence == 0) read_ = cursor_ = position{seq};  // the shard's first segment ever
    apply_notice();
    commit_cursor();  // a segment closed just now may be wholly confirmed
    pump();
  }

  /// The writer takes no more records into `seq`: once confirmed to its end
  /// the segment can go, even when no next segment could be created (a full
  /// disk), which is what frees the space to create one.
  void on_sealed(std::uint64_t seq, std::uint64_t end) {
    auto& st = segments_[seq];
    st.end = std::max(st.end, end);
    st.closed = true;
    if (listed_ && read_.sequence == 0) read_ = cursor_ = position{seq};
    commit_cursor();
    pump();
  }

  void on_delivered(std::uint64_t id, spent_batch& spent) {
    recycler_.keep(spent, pending_, s_.batch_max_records, s_.batch_max_bytes);
    for (auto& b : flying_)
      if (b.id == id) {
        b.done = true;
        if (s_.progress) s_.progress->confirmed.fetch_add(b.records, std::memory_order_relaxed);
      }
    while (!flying_.empty() && flying_.front().done) {
      cursor_ = flying_.front().end;
      flying_.pop_front();
    }
    commit_cursor();
    pump();
  }

  void on_linger(std::uint64_t epoch) {
    if (epoch != linger_epoch_) return;
    linger_scheduled_ = false;
    // What was written while the batch waited is in the notice, not in
    // messages: it joins the batch before it goes.
    catch_up();
    while (!batch_full() && read_some()) {
    }
    if (!pending_.empty()) send_pending();
    pump();
  }

 private:
  /// Reads what is written and not yet read, cutting batches, while fewer
  /// than max_in_flight batches are unconfirmed.
  void pump() {
    do {
      while (flying_.size() < s_.max_in_flight) {
        if (!read_some()) break;
        if (batch_full()) send_pending();
      }
      if (!pending_.empty() && !linger_scheduled_ && flying_.size() < s_.max_in_flight) {
        if (s_.linger_ms == 0) {
          send_pending();
        } else {
          linger_scheduled_ = true;
          self_->delayed_send(self_, std::chrono::milliseconds(s_.linger_ms), linger_atom::value, linger_epoch_);
        }
      }
    } while (ask_for_news());
    publish_oldest();
  }

  /// Asks the writer, through the notice, for a message at its next write
  /// (caught up), or once its writes could fill the lingering batch; none
  /// while the sink holds max_in_flight batches (a confirmation pumps). True
  /// when news had come meanwhile: it is taken, and the caller reads on and
  /// asks again, even when there was nothing in it to read (a take drops
  /// the wish: only asking again after it can leave one standing). Each
  /// turn needs a write that lands between a take and the next ask.
  bool ask_for_news() {
    if (!s_.notice || flying_.size() >= s_.max_in_flight) return false;
    std::uint64_t bytes = 0, records = 0;
    if (linger_scheduled_) {
      bytes = s_.batch_max_bytes - std::min(pending_bytes_, s_.batch_max_bytes - 1);
      records = s_.batch_max_records - std::min<std::uint64_t>(pending_.size(), s_.batch_max_records - 1);
    }
    if (!s_.notice->wake_after(bytes, records)) return false;
    catch_up();
    return true;
  }

  /// Learns from the notice how far the writer's segment is readable. Only
  /// messages make segments known, and close them, in the order the writer
  /// made them: a segment the notice names before its `appended` message
  /// came waits in unapplied_, or reading could step over one not yet known.
  void catch_up() {
    if (!s_.notice) return;
    unapplied_ = s_.notice->take();
    apply_notice();
  }

  void apply_notice() {
    auto it = segments_.find(unapplied_.sequence);
    if (it == segments_.end()) return;
    it->second.end = std::max(it->second.end, unapplied_.end);
    unapplied_ = {};
  }

  /// The ingest time of the shard's oldest record the sink has not
  /// confirmed, for the age the metrics show (0: none waiting). Batches go
  /// out in record order, so it is the first one still in flight.
  void publish_oldest() {
    if (!s_.progress) return;
    std::int64_t oldest = 0;
    if (!flying_.empty()) oldest = flying_.front().first_ts_ns;
    else if (!pending_.empty()) oldest = pending_.front().ts_ns;
    else if (!read_to_end()) return;  // records wait unread (a read to retry): the last known age holds
    s_.progress->oldest_undelivered_ts_ns.store(oldest, std::memory_order_relaxed);
  }

  /// Everything written has been read.
  bool read_to_end() const {
    if (segments_.empty()) return true;
    const auto last = std::prev(segments_.end());
    if (read_.sequence < last->first) return false;
    const auto it = segments_.find(read_.sequence);
    return it == segments_.end() || std::max(read_.offset, it->second.start) >= it->second.end;
  }

  /// Moves the cursor on (normalised) and makes it durable: at once when a
  /// segment is wholly behind it (it must be on disk before the segment goes),
  /// else at most every cursor_persist_ms — each persist costs a sync, and
  /// an older cursor only means redelivering a little more after a crash.
  void commit_cursor() {
    if (!listed_) return;
    normalise_cursor();
    // Caught up at the end of a closed segment, the cursor can step to the
    // next segment ahead of the read position: reading must follow, since the
    // segment it was on is about to be deleted.
    if (read_ < cursor_) read_ = cursor_;
    if (cursor_ == stored_) return;
    const bool frees_segment = !segments_.empty() && segments_.begin()->first < cursor_.sequence;
    if (frees_segment) persist_cursor();
    else schedule_persist();
  }

  void schedule_persist() {
    if (persist_scheduled_) return;
    persist_scheduled_ = true;
    self_->delayed_send(self_, std::chrono::milliseconds(s_.cursor_persist_ms), persist_atom::value);
  }

 public:
  /// Stores the cursor if it moved, then deletes every segment every sink's
  /// stored cursor has passed. Either failing is retried on the timer, not left to
  /// the next delivery: with the WAB over its cap no record comes to move
  /// the cursor, and the space held would never be freed.
  void persist_cursor() {
    persist_scheduled_ = false;
    if (!listed_) {
      if (list_earlier_segments()) {
        start_from_cursor();  // which persists
        pump();
      }
      return;
    }
    bool done = true;
    if (cursor_ != stored_) {
      if (int rc = cursor_file_->store(cursor_); rc < 0) {
        // Not fatal: an old cursor only means redelivery.
        trouble_->report("cannot persist the confirm cursor", rc);
        done = false;
      } else {
        stored_ = cursor_;
      }
    }
    const auto settled = s_.release->stored(s_.sink_index, stored_.sequence);
    if (s_.confirmed && settled.moved) self_->send(s_.confirmed, confirmed_atom::value, settled.below);
    if (done && !delete_confirmed(settled.below)) done = false;
    if (read_retry_) {
      read_retry_ = false;
      pump();  // a read that fails again sets read_retry_ and the next try
    }
    if (!done) schedule_persist();
    else if (!read_retry_) trouble_->all_well();
  }

 private:

  bool batch_full() const {
    return pending_.size() >= s_.batch_max_records || pending_bytes_ >= s_.batch_max_bytes;
  }

  /// Moves records into pending_ until the batch is full or nothing more is
  /// readable; false when nothing was read.
  bool read_some() {
    if (read_retry_ || !listed_) return false;  // the persist timer retries
    auto it = segments_.lower_bound(read_.sequence);
    if (it == segments_.end()) return false;
    if (it->first != read_.sequence) read_ = position{it->first};
    if (std::max(read_.offset, it->second.start) >= it->second.end) {
      auto next = std::next(it);
      if (!it->second.closed || next == segments_.end()) return false;
      close_reader();
      read_ = position{next->first};
      return true;
    }
    const std::string segment = s_.segment_prefix + shard_name_ + "/" + wab::segment_file_name(read_.sequence);
    if (int rc = open_reader(it->first); rc < 0) {
      // Out of descriptors, or the file gone from under the daemon: one
      // log line and a retry on the timer, not a line per announcement.
      retry_read_later("cannot open WAB segment " + segment, rc);
      return false;
    }
    if (!fd_header_) {
      // Recovery moved every segment with a bad header aside before the
      // drain started: this is an I/O error. Try again later; never take the
      // segment for empty (it could be the one the writer is acking into).
      retry_read_later("cannot read the header of WAB segment " + segment);
      return false;
    }
    wab::segment_reader reader(*s_.io, fd_, *fd_header_, it->second.end, read_.offset, read_.index,
                               wab::resync_window_for(*fd_header_, wab::wall_clock_ns()));
    reader.use_buffer(read_ahead_);
    bool any = false;
    while (!batch_full() && reader.next(read_into_)) {
      any = true;
      sink_record& r = recycler_.next(pending_);
      // The payload buffers swap: the reader fills the spent record's next time.
      r.payload.swap(read_into_.payload);
      wire::to_hex(wire::compute_record_id(segment, read_into_.index, r.payload), r.id);
      r.node = s_.node;
      r.shard = s_.shard;
      r.segment = segment;
      r.sequence = read_.sequence;
      r.index = read_into_.index;
      r.ts_ns = read_into_.ingest_ts_ns;
      pending_bytes_ += r.payload.size();
    }
    // The reader may have stepped over damage without a record to show for it.
    any = any || reader.valid_end() > read_.offset;
    read_.offset = reader.valid_end();
    read_.index = reader.next_index();
    const bool ends_early = reader.stop() != wab::scan_stop::none && reader.stop() != wab::scan_stop::end_of_file;
    if (ends_early && reader.stop() != wab::scan_stop::io_error && read_on_past_seal(it->second)) return true;
    damage_->count_skipped(read_.sequence, reader);
    if (reader.stop() == wab::scan_stop::io_error) {
      retry_read_later("cannot read WAB segment " + segment);
      return any;
    }
    damage_->met_damage(read_.sequence, fd_, segment, reader, ends_early);
    if (!any && ends_early) {
      // Records that no longer check up to its known end, and none after
      // them: nothing more to deliver from this file.
      it->second.end = read_.offset;
      damage_->read_to_end(it->first, it->second.sealed_records, read_.index);
      return true;
    }
    if (it->second.closed && read_.offset >= it->second.end)
      damage_->read_to_end(it->first, it->second.sealed_records, read_.index);
    return any;
  }

  /// An earlier run's sealed segment whose records stop checking before
  /// its seal's end: the seal may be one weir never wrote, ending inside a
  /// record, with acked records after it. The rest of the file is read too
  /// (only this segment's records check there), once; what is still
  /// damaged then is reported as damage.
  bool read_on_past_seal(segment_state& st) {
    if (!st.sealed_records || st.read_past_seal) return false;
    const std::int64_t size = s_.io->size(fd_);
    if (size <= 0 || static_cast<std::uint64_t>(size) <= st.end) return false;
    st.read_past_seal = true;
    s_.release->extended(fd_sequence_, st.end, static_cast<std::uint64_t>(size));  // deleting it removes its end
    st.end = static_cast<std::uint64_t>(size);
    return true;
  }

  /// A read failed: closes the file (reopened, header and all, next time)
  /// and tries again on the persist timer.
  void retry_read_later(const std::string& what, int rc = -EIO) {
    close_reader();
    trouble_->report(what, rc);
    read_retry_ = true;
    schedule_persist();
  }

  void send_pending() {
    ++linger_epoch_;
    linger_scheduled_ = false;
    const std::uint64_t id = next_batch_++;
    flying_.push_back({id, read_, false, pending_.size(), pending_.front().ts_ns});
    self_->send(runner_, delivery_batch{id, caf::actor_cast<delivery_client_actor>(self_), std::move(pending_)});
    pending_.clear();
    pending_bytes_ = 0;
  }

  /// 0, or the open's -errno.
  int open_reader(std::uint64_t seq) {
    if (fd_ >= 0 && fd_sequence_ == seq) return 0;
    close_reader();
    const int fd = s_.io->open_existing(s_.shard_dir + "/" + wab::segment_file_name(seq));
    if (fd < 0) return fd;
    fd_ = fd;
    fd_sequence_ = seq;
    // Its version says where records start and how their CRCs begin; its
    // creation time bounds the timestamps a reader may resynchronise on.
    auto header = wab::read_segment_header(*s_.io, fd_);
    fd_header_.reset();
    if (header) fd_header_ = header.value();
    return 0;
  }

  void close_reader() {
    if (fd_ >= 0) s_.io->close(fd_);
    fd_ = -1;
  }

  /// The segments an earlier run left (closed, each with its extent); false,
  /// with the reason logged and a retry on the persist timer, when they
  /// cannot all be known. Going on without one would let the cursor step
  /// over it as if it were not there, and a later start delete it.
  bool list_earlier_segments() {
    auto earlier = drain_parts::list_earlier_segments(*s_.io, s_.shard_dir, s_.first_live_sequence);
    if (earlier.error < 0) {
      trouble_->report(earlier.failed + "; nothing of the shard is delivered or deleted until it can be", earlier.error);
      schedule_persist();
      return false;
    }
    segments_.merge(earlier.found);  // the writer's own segments may be known already
    return true;
  }

  /// A stored cursor that points past a gap or names no record of its own
  /// segment (wab/cursor_trust.hpp) would delete or skip records it never
  /// confirmed: it is not trusted. Nothing is deleted, and the shard is
  /// delivered from its oldest segment (duplicates possible, no loss).
  void distrust_cursor_past_segments() {
    if (!loaded_ || segments_.empty()) return;
    std::map<std::uint64_t, std::uint64_t> records_end;
    for (const auto& [seq, st] : segments_) records_end.emplace(seq, st.end);
    const auto verdict = wab::judge_cursor(*s_.io, s_.shard_dir, *loaded_, records_end);
    if (verdict == wab::cursor_verdict::trusted) return;
    const auto below = segments_.lower_bound(loaded_->sequence);
    log::error(wab::why_untrusted(verdict) + "; it is not trusted: nothing is deleted and the shard is delivered "
                   "from its oldest segment (duplicates possible)",
               {{"dir", s_.shard_dir}, {"cursor_segment", std::to_string(loaded_->sequence)},
                {"cursor_offset", std::to_string(loaded_->offset)}, {"cursor_index", std::to_string(loaded_->index)},
                {"last_segment_below_it", below == segments_.begin() ? "none" : std::to_string(std::prev(below)->first)},
                {"oldest_segment", std::to_string(segments_.begin()->first)}});
    loaded_.reset();
  }

  /// A cursor at the end of a closed segment moves to the start of the next
  /// one, so that the segment behind it can go.
  void normalise_cursor() {
    while (true) {
      auto it = segments_.lower_bound(cursor_.sequence);
      if (it == segments_.end()) return;
      if (it->first != cursor_.sequence) {
        cursor_ = position{it->first};
        continue;
      }
      if (!it->second.closed || std::max(cursor_.offset, it->second.start) < it->second.end) return;
      // Past a closed segment's end: onto the next one, or where the next
      // one will be when the writer could not make it yet.
      auto next = std::next(it);
      cursor_ = position{next == segments_.end() ? it->first + 1 : next->first};
    }
  }

  /// Deletes the segments below `below`, which every sink's stored cursor
  /// has passed (never one only an in-memory cursor has), unless another
  /// sink's drain did; false when one could not be deleted.
  bool delete_confirmed(std::uint64_t below) {
    bool removed = false, all = true;
    for (auto it = segments_.begin(); it != segments_.end() && it->first < below;) {
      const std::string path = s_.shard_dir + "/" + wab::segment_file_name(it->first);
      if (fd_sequence_ == it->first) close_reader();
      const int rc = s_.release->remove_once(it->first, it->second.end, [&] {
        // Kept as a spare when the pool wants one: its blocks are already written.
        const int recycled = s_.spares ? s_.spares->recycle(path) : 0;
        const int rc = recycled > 0 ? 0 : s_.io->unlink(path);
        if (rc < 0 && rc != -ENOENT) return rc;
        removed = true;
        return 0;
      });
      if (rc < 0) {
        trouble_->report("cannot delete a confirmed WAB segment " + path, rc);
        all = false;
        break;
      }
      it = segments_.erase(it);
    }
    if (removed) s_.io->fsync_directory(s_.shard_dir);
    if (all) {
      s_.release->all_gone_below(below);
      if (s_.damage_claims) s_.damage_claims->forget_below(below);
    }
    return all;
  }

  pointer self_ = nullptr;
  drain_settings s_;
  batch_consumer_actor runner_;
  std::string shard_name_;
  drain_parts::segment_map segments_;
  position cursor_, read_;
  position stored_;  // the cursor as last persisted
  std::vector<sink_record> pending_;
  std::uint64_t pending_bytes_ = 0;
  drain_parts::record_recycler recycler_;
  wab::stored_record read_into_;       // the reader's target; its payload buffer swaps with a record's
  wab::read_ahead_buffer read_ahead_;  // lent to each read's reader
  std::deque<in_flight> flying_;
  std::uint64_t next_batch_ = 0;
  std::uint64_t linger_epoch_ = 0;
  bool linger_scheduled_ = false;
  append_notice::written_end unapplied_;  // from the notice, for a segment no message announced yet
  bool persist_scheduled_ = false;
  bool read_retry_ = false;  // a read failed: pump again on the persist timer
  std::optional<drain_parts::trouble_log> trouble_;
  std::optional<drain_parts::damage_ledger> damage_;
  std::unique_ptr<wab::cursor_file> cursor_file_;
  std::optional<position> loaded_;  // the cursor found at startup
  bool listed_ = false;             // the segments earlier runs left are known
  int fd_ = -1;
  std::uint64_t fd_sequence_ = 0;
  std::optional<wab::segment_header> fd_header_;

 public:
  ~drain_state() { close_reader(); }
};

drain_actor::behavior_type drain_behavior(drain_state::pointer self, drain_settings s, batch_consumer_actor runner) {
  log_exceptions(self, "drain");
  self->state.init(self, std::move(s), std::move(runner));
  self->send(self, linger_atom::value, std::uint64_t{0});  // deliver what earlier runs left at once
  return {
      [=](appended_atom, std::uint64_t seq, std::uint64_t end) { self->state.on_appended(seq, end); },
      [=](sealed_atom, std::uint64_t seq, std::uint64_t end) { self->state.on_sealed(seq, end); },
      [=](delivered_atom, std::uint64_t id, spent_batch& spent) { self->state.on_delivered(id, spent); },
      [=](linger_atom, std::uint64_t epoch) { self->state.on_linger(epoch); },
      [=](persist_atom) { self->state.persist_cursor(); },
      [=](shutdown_atom) {
        self->state.persist_cursor();
        self->quit();
        return done_atom::value;
      },
  };
}

}  // namespace

drain_actor spawn_drain(caf::actor_system& sys, drain_settings settings, batch_consumer_actor sink_runner) {
  const auto thread = settings.thread;
  return spawn_on(sys, thread, drain_behavior, std::move(settings), std::move(sink_runner));
}

}  // namespace weir
