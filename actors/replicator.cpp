#include "actors/replicator.hpp"

#include <algorithm>
#include <cerrno>
#include <deque>
#include <limits>
#include <filesystem>
#include <map>
#include <utility>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/failure_log.hpp"
#include "actors/reply_queue.hpp"
#include "observability/cluster_metrics.hpp"
#include "observability/log.hpp"
#include "wab/segment_format.hpp"
#include "wire/bytes.hpp"
#include "wab/segment_reader.hpp"

namespace weir {

namespace {

/// A place in the shard's WAB: byte `offset` of segment `sequence`.
struct spot {
  std::uint64_t sequence = 0;
  std::uint64_t offset = 0;
  bool operator<(const spot& o) const { return sequence != o.sequence ? sequence < o.sequence : offset < o.offset; }
  bool operator<=(const spot& o) const { return !(o < *this); }
};

struct peer_state {
  cluster_node_actor handle;
  bool up = false;
  bool positioned = false;    // it said where its copy ends; shipping follows on from there
  std::uint64_t generation = 0;  // answers to an earlier life of this peer's state are stale
  spot shipped;                  // where the next chunk starts
  std::uint64_t next_index = 1;  // the record index there
  bool seal_sent = false;        // the segment `shipped` is in was shipped as sealed
  bool may_skip = false;         // the next segment start may leave the copy's previous one incomplete
  spot acked;                    // synced on the peer up to here
  std::uint64_t acked_index = 1; // the record index there (for the lag in records)
  std::uint32_t in_flight = 0;
  bool asking = false;           // a position request is out
  std::chrono::steady_clock::time_point ask_after{};  // after a failed request: not before then
};

struct known_segment {
  std::uint64_t end = wab::segment_prefix_size;
  bool sealed = false;
  std::uint64_t records = 0;  // up to `end`
};

/// A segment found at startup, in one read. One an earlier run left is
/// sealed (startup recovery sealed every one), its extent in its seal. One
/// without a seal is the writer's first segment, made before this listing:
/// it grows, and the writer's announcements tell where it ends. (Taken as
/// sealed, the first chunk to catch up with it would seal the peers' copies
/// there and count the records written after as held.)
std::optional<known_segment> stored_segment(wab::file_io& io, const std::string& path) {
  const int fd = io.open_existing(path);
  if (fd < 0) return std::nullopt;
  const auto header = wab::read_segment_header(io, fd);
  const std::int64_t size = io.size(fd);
  io.close(fd);
  if (!header || size < 0) return std::nullopt;
  const auto& h = header.value();
  const auto seal = wab::usable_seal(h, static_cast<std::uint64_t>(size));
  if (!seal) return known_segment{h.data_start(), false, 0};
  return known_segment{std::max(h.data_start(), seal->data_end), true, seal->records};
}

class replicator_state {
 public:
  static inline const char* name = "replicator";
  using pointer = replicator_actor::stateful_pointer<replicator_state>;

  void init(pointer self, replicator_settings s) {
    self_ = self;
    s_ = std::move(s);
    // Segments an earlier run left: closed, their extent in their seal.
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(s_.shard_dir, ec))
      if (auto seq = wab::parse_segment_file_name(e.path().filename().string()))
        if (auto seg = stored_segment(*s_.io, e.path().string())) segments_[*seq] = *seg;
    self_->delayed_send(self_, s_.tick, tick_atom::value);
  }

  ~replicator_state() { close_file(); }

  void on_appended(std::uint64_t seq, std::uint64_t end, std::uint64_t records) {
    segments_[seq].records = std::max(segments_[seq].records, records);
    on_appended(seq, end);
  }

  void on_appended(std::uint64_t seq, std::uint64_t end) {
    for (auto& [s, seg] : segments_)
      if (s < seq) seg.sealed = true;  // a newer segment started: older ones are final
    auto& seg = segments_[seq];
    seg.end = std::max(seg.end, end);
    pump_all();
  }

  void on_sealed(std::uint64_t seq, std::uint64_t end) {
    auto& seg = segments_[seq];
    seg.end = std::max(seg.end, end);
    seg.sealed = true;
    pump_all();
  }

  void on_peer(peer_update& u) {
    auto& p = peers_[u.node];
    ++p.generation;
    p.up = u.up;
    p.positioned = false;
    p.asking = false;
    p.in_flight = 0;
    if (u.up) {
      p.handle = std::move(u.handle);
      ask_position(u.node);
    }
    if (s_.stats) s_.stats->set_lag(u.node, lag_of(p), lag_records_of(p), s_.shard);
    if (up_peers() < s_.copies_needed) refuse_all("too few peers are up");
  }

  void on_wait(replication_wait& w) {
    if (up_peers() < s_.copies_needed) {
      refuse(w);
      ++refused_unsaid_;
      say_refused_on_arrival();
      return;
    }
    waits_.push_back(std::move(w));
    release();
  }

  void on_confirmed(std::uint64_t seq) {
    segments_.erase(segments_.begin(), segments_.lower_bound(seq));
    if (fd_sequence_ < seq) close_file();
    for (auto& [node, p] : peers_)
      if (p.up) self_->send(p.handle, replica_trim{s_.node, s_.shard, seq, s_.incarnation});
    pump_all();
  }

  void on_tick() {
    say_refused_on_arrival();
    const auto now = self_->clock().now().time_since_epoch().count();
    while (!waits_.empty() && waits_.front().deadline_ns <= now) {
      refuse(waits_.front());
      waits_.pop_front();
    }
    for (auto& [node, p] : peers_) {
      if (p.up && !p.positioned && !p.asking && self_->clock().now() >= p.ask_after) ask_position(node);
      if (s_.stats) s_.stats->set_lag(node, lag_of(p), lag_records_of(p), s_.shard);
    }
    self_->delayed_send(self_, s_.tick, tick_atom::value);
  }

  void shutdown() { refuse_all("the node is stopping"); }

 private:
  std::uint32_t up_peers() const {
    std::uint32_t n = 0;
    for (const auto& [node, p] : peers_) n += p.up;
    return n;
  }

  /// Bytes written here that the peer has not synced yet.
  std::uint64_t lag_of(const peer_state& p) const {
    std::uint64_t lag = 0;
    for (const auto& [seq, seg] : segments_) {
      if (seq < p.acked.sequence) continue;
      const std::uint64_t from = seq == p.acked.sequence ? std::max(p.acked.offset, wab::segment_prefix_size)
                                                         : wab::segment_prefix_size;
      lag += seg.end > from ? seg.end - from : 0;
    }
    return lag;
  }

  /// Records written here that the peer has not synced yet.
  std::uint64_t lag_records_of(const peer_state& p) const {
    std::uint64_t lag = 0;
    for (const auto& [seq, seg] : segments_) {
      if (seq < p.acked.sequence) continue;
      const std::uint64_t held = seq == p.acked.sequence ? p.acked_index - 1 : 0;
      lag += seg.records > held ? seg.records - held : 0;
    }
    return lag;
  }

  /// Whether the answer being handled comes from `node`'s link: CAF matches
  /// an answer to its request by id alone, and another node could forge one.
  bool answered_by(std::uint16_t node) {
    const auto sender = self_->current_sender();
    auto& p = peers_[node];
    return sender && p.handle && sender->node() == p.handle.node();
  }


  void ask_position(std::uint16_t node) {
    auto& p = peers_[node];
    const auto gen = p.generation;
    p.asking = true;
    self_->request(p.handle, s_.request_timeout, position_atom::value, s_.node, s_.shard)
        .then([this, node, gen](replica_position& at) {
                // A forged answer used up the request: asked again.
                if (answered_by(node)) on_position(node, gen, at);
                else retry_position(node, gen);
              },
              [this, node, gen](caf::error&) {
                retry_position(node, gen);
              });
  }

  /// A request failed or the copy went astray: ask where the copy ends
  /// again, after a pause (a peer that keeps failing is not hammered).
  void retry_position(std::uint16_t node, std::uint64_t gen) {
    auto& p = peers_[node];
    if (p.generation != gen || !p.up) return;
    ++p.generation;
    p.in_flight = 0;
    p.positioned = false;
    p.asking = false;
    p.ask_after = self_->clock().now() + std::chrono::milliseconds(200);
  }

  /// The peer's copy ends at `at`: shipping resumes there, or at the oldest
  /// segment still here when the peer is behind it (what is gone here was
  /// delivered and needs no copy).
  void on_position(std::uint16_t node, std::uint64_t gen, replica_position at) {
    auto& p = peers_[node];
    if (p.generation != gen || !p.up) return;
    p.asking = false;
    if (at.incarnation != 0 && at.incarnation != s_.incarnation) {
      // A copy of an earlier life of this node: the peer retires (and
      // delivers) it at this life's first chunk; this life's copy starts empty.
      log::info("a peer holds a copy of an earlier life of this node; it delivers that copy, and this life's starts",
                {{"peer", std::to_string(node)}, {"shard", std::to_string(s_.shard)},
                 {"peer_segment", std::to_string(at.sequence)}});
      at = replica_position{s_.node, s_.shard, 0, 0, 1, false, s_.incarnation};
    }
    if (ahead_of_us(at)) {
      // The peer holds more of this node's shard than this node ever wrote:
      // this node's data_dir was replaced under the same cluster.node_id.
      // Its copy proves nothing about what is written now; it never counts.
      log::error("a peer's copy of this shard is ahead of this node's WAB; the peer is not counted for Replicated "
                 "acks (was data_dir replaced? give a rebuilt node a new cluster.node_id)",
                 {{"peer", std::to_string(node)}, {"shard", std::to_string(s_.shard)},
                  {"peer_segment", std::to_string(at.sequence)}, {"peer_offset", std::to_string(at.offset)}});
      p.ask_after = self_->clock().now() + std::chrono::seconds(5);  // asked again, in case it clears
      return;
    }
    p.positioned = true;
    p.shipped = {at.sequence, at.offset};
    p.next_index = at.next_index;
    p.seal_sent = at.sealed;
    const std::uint64_t oldest = segments_.empty() ? at.sequence : segments_.begin()->first;
    if (at.sequence == 0 || at.sequence < oldest) {
      start_segment(p, oldest);
      p.may_skip = true;  // what the copy lacks before `oldest` was delivered
    }
    p.acked = p.shipped;
    p.acked_index = p.next_index;
    log::info("replicating a shard to a peer", {{"peer", std::to_string(node)},
                                               {"shard", std::to_string(s_.shard)},
                                               {"from_segment", std::to_string(p.shipped.sequence)},
                                               {"from_offset", std::to_string(p.shipped.offset)}});
    release();
    pump(node);
  }

  /// A copy ending past what this node wrote: a segment newer than the
  /// newest here, or past the end of one still here.
  bool ahead_of_us(const replica_position& at) const {
    if (at.sequence == 0) return false;
    if (segments_.empty() || at.sequence > segments_.rbegin()->first) return true;
    const auto it = segments_.find(at.sequence);
    return it != segments_.end() && at.offset != std::numeric_limits<std::uint64_t>::max() && at.offset > it->second.end;
  }

  static void start_segment(peer_state& p, std::uint64_t seq) {
    p.shipped = {seq, wab::segment_prefix_size};
    p.next_index = 1;
    p.seal_sent = false;
  }

  void pump_all() {
    for (auto& [node, p] : peers_) pump(node);
  }

  void pump(std::uint16_t node) {
    auto& p = peers_[node];
    while (p.up && p.positioned && p.in_flight < s_.max_in_flight) {
      auto chunk = next_chunk(p);
      if (!chunk) return;
      ship(node, p, std::move(*chunk));
    }
  }

  /// The next chunk for `p` from where it stands, or nothing to send now.
  std::optional<replica_chunk> next_chunk(peer_state& p) {
    while (true) {
      auto it = segments_.lower_bound(p.shipped.sequence);
      if (it == segments_.end()) return std::nullopt;
      if (it->first != p.shipped.sequence) {
        start_segment(p, it->first);
        p.may_skip = true;  // the segments in between were delivered and deleted here
      }
      const auto& seg = it->second;
      const std::uint64_t from = std::max(p.shipped.offset, wab::segment_prefix_size);
      if (from < seg.end) {
        if (open_file(it->first)) return read_chunk(it->first, from, seg, p.next_index);
        if (errno_of_open_ != -ENOENT) return std::nullopt;  // retried on the next announcement
        // Delivered and deleted since it was listed: nothing left to copy.
        segments_.erase(it);
        continue;
      }
      if (!seg.sealed) return std::nullopt;  // caught up with the writer
      if (!p.seal_sent) {
        // Nothing more to copy, but the replica must learn the segment is complete.
        replica_chunk c{s_.node, s_.shard, it->first, from, p.next_index, 0, {}, true, false, s_.incarnation};
        return c;
      }
      auto next = std::next(it);
      if (next == segments_.end()) return std::nullopt;
      start_segment(p, next->first);
    }
  }

  /// Whole records from `from`, up to chunk_bytes (at least one record).
  std::optional<replica_chunk> read_chunk(std::uint64_t seq, std::uint64_t from, const known_segment& seg,
                                          std::uint64_t first_index) {
    if (!open_file(seq)) return std::nullopt;
    std::uint64_t want = std::min(seg.end - from, s_.chunk_bytes);
    replica_chunk c{s_.node, s_.shard, seq, from, first_index, 0, {}, false, false, s_.incarnation};
    c.bytes.resize(want);
    if (!read_exact(c.bytes.data(), want, from)) return std::nullopt;
    // Cut after the last whole record; a record bigger than the chunk goes alone.
    std::uint64_t at = 0;
    while (at + wab::record_header_size <= c.bytes.size()) {
      const std::uint64_t len = load_le32(c.bytes.data() + at) + wab::record_header_size;
      if (at + len > c.bytes.size()) {
        if (at > 0) break;
        if (from + len > seg.end) break;
        c.bytes.resize(len);
        if (!read_exact(c.bytes.data(), len, from)) return std::nullopt;
      }
      at += len;
      ++c.records;
    }
    c.bytes.resize(at);
    if (c.records == 0) return std::nullopt;
    c.sealed = seg.sealed && from + at == seg.end;
    return c;
  }

  bool read_exact(std::uint8_t* out, std::uint64_t n, std::uint64_t at) {
    std::uint64_t done = 0;
    while (done < n) {
      const auto got = s_.io->pread(fd_, out + done, n - done, at + done);
      if (got <= 0) {
        close_file();
        return false;
      }
      done += static_cast<std::uint64_t>(got);
    }
    return true;
  }

  bool open_file(std::uint64_t seq) {
    if (fd_ >= 0 && fd_sequence_ == seq) return true;
    close_file();
    fd_ = s_.io->open_existing(s_.shard_dir + "/" + wab::segment_file_name(seq));
    fd_sequence_ = seq;
    errno_of_open_ = fd_ < 0 ? fd_ : 0;
    if (fd_ < 0) fd_ = -1;
    return fd_ >= 0;
  }

  void close_file() {
    if (fd_ >= 0) s_.io->close(fd_);
    fd_ = -1;
    fd_sequence_ = 0;
  }

  void ship(std::uint16_t node, peer_state& p, replica_chunk c) {
    const spot end{c.sequence, c.offset + c.bytes.size()};
    p.shipped = end;
    p.next_index = c.first_index + c.records;
    p.seal_sent = c.sealed;
    c.skips = std::exchange(p.may_skip, false) && c.offset == wab::segment_prefix_size;
    ++p.in_flight;
    const auto gen = p.generation;
    self_->request(p.handle, s_.request_timeout, std::move(c))
        .then([this, node, gen, end](replica_position& at) {
                if (answered_by(node)) on_chunk_synced(node, gen, end, at);
                else retry_position(node, gen);
              },
              [this, node, gen](caf::error&) {
                retry_position(node, gen);
              });
  }

  void on_chunk_synced(std::uint16_t node, std::uint64_t gen, spot sent_to, const replica_position& at) {
    auto& p = peers_[node];
    if (p.generation != gen || !p.up) return;
    --p.in_flight;
    const spot held{at.sequence, at.offset};
    // Only a copy of this life holds this life's records.
    if (held < sent_to || (at.incarnation != 0 && at.incarnation != s_.incarnation)) {
      // The replica's copy ends before this chunk's end (it refused a chunk
      // out of order, or lost its copy): start again from where it is.
      retry_position(node, gen);
      return;
    }
    if (p.acked < held) {
      p.acked = held;
      p.acked_index = at.next_index;
    }
    if (at.sealed && p.acked.sequence == at.sequence) {
      p.acked = {at.sequence + 1, 0};
      p.acked_index = 1;
    }
    if (s_.stats) s_.stats->replicated_chunk();
    release();
    pump(node);
  }

  /// Answers the waits that enough peers now hold, oldest first.
  void release() {
    while (!waits_.empty()) {
      const spot need{waits_.front().sequence, waits_.front().end_offset};
      std::uint32_t holders = 0;
      for (const auto& [node, p] : peers_) holders += p.up && p.positioned && need <= p.acked;
      if (holders < s_.copies_needed) return;
      answer(waits_.front(), true);
      waits_.pop_front();
    }
  }

  void refuse(replication_wait& w) { answer(w, false); }

  /// Pushes refused as they come, while too few peers are up (after a
  /// restart, until the peers have dialled in): said at once, then at most
  /// every 10 s with the count since, so that a burst is a line, not a line a push.
  void say_refused_on_arrival() {
    const auto now = self_->clock().now();
    if (refused_unsaid_ == 0 || now < next_refusal_line_) return;
    log::warn("Replicated pushes refused", {{"shard", std::to_string(s_.shard)},
                                            {"pushes", std::to_string(refused_unsaid_)},
                                            {"why", "too few peers are up"},
                                            {"peers_up", std::to_string(up_peers())},
                                            {"copies_needed", std::to_string(s_.copies_needed)}});
    refused_unsaid_ = 0;
    next_refusal_line_ = now + std::chrono::seconds(10);
  }

  void refuse_all(const char* why) {
    if (waits_.empty()) return;
    log::warn("Replicated pushes refused", {{"shard", std::to_string(s_.shard)},
                                            {"pushes", std::to_string(waits_.size())},
                                            {"why", why}});
    for (auto& w : waits_) refuse(w);
    waits_.clear();
  }

  void answer(replication_wait& w, bool ok) {
    for (auto& a : w.acks) {
      if (s_.stats) s_.stats->replication_ack(ok, a.records);
      deliver_reply(self_, a.replies, a.to,
                    ok ? ingest_reply{a.tag, std::move(a.on_success), a.records}
                       : ingest_reply{a.tag, std::move(a.on_failure), 0},
                    true);
    }
  }

  pointer self_ = nullptr;
  replicator_settings s_;
  std::map<std::uint64_t, known_segment> segments_;
  std::map<std::uint16_t, peer_state> peers_;
  std::deque<replication_wait> waits_;
  std::uint64_t refused_unsaid_ = 0;  // refused on arrival since the last line saying so
  std::chrono::steady_clock::time_point next_refusal_line_{};
  int fd_ = -1;
  std::uint64_t fd_sequence_ = 0;
  int errno_of_open_ = 0;
};

replicator_actor::behavior_type replicator_behavior(replicator_state::pointer self, replicator_settings s) {
  log_exceptions(self, "replicator");
  self->state.init(self, std::move(s));
  return {
      [=](appended_atom, std::uint64_t seq, std::uint64_t end) { self->state.on_appended(seq, end); },
      [=](appended_atom, std::uint64_t seq, std::uint64_t end, std::uint64_t records) {
        self->state.on_appended(seq, end, records);
      },
      [=](sealed_atom, std::uint64_t seq, std::uint64_t end) { self->state.on_sealed(seq, end); },
      [=](peer_update& u) { self->state.on_peer(u); },
      [=](replication_wait& w) { self->state.on_wait(w); },
      [=](confirmed_atom, std::uint64_t seq) { self->state.on_confirmed(seq); },
      [=](tick_atom) { self->state.on_tick(); },
      [=](shutdown_atom) {
        self->state.shutdown();
        self->quit();
        return done_atom::value;
      },
  };
}

}  // namespace

replicator_actor spawn_replicator(caf::actor_system& sys, replicator_settings settings) {
  const auto thread = settings.thread;
  return spawn_on(sys, thread, replicator_behavior, std::move(settings));
}

}  // namespace weir
