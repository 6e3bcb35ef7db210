#include "actors/replica_store.hpp"

#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/failure_log.hpp"
#include "observability/log.hpp"
#include "wab/confirm_cursor.hpp"
#include "wab/incarnation_file.hpp"
#include "wab/recovery.hpp"
#include "wab/segment_format.hpp"
#include "wab/segment_reader.hpp"
#include "wab/segment_writer.hpp"
#include "wab/wall_clock.hpp"

namespace weir {

std::string replica_shard_dir(const std::string& root, std::uint16_t origin, std::uint16_t shard) {
  return root + "/node_" + std::to_string(origin) + "/" + wab::shard_dir_name(shard);
}

namespace {

/// Creates `dir` and its missing parents, mode 0700.
int make_private_dirs(const std::string& dir) {
  std::string partial;
  for (const auto& part : std::filesystem::path(dir)) {
    partial = partial.empty() ? part.string() : (std::filesystem::path(partial) / part).string();
    if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) return -errno;
  }
  return 0;
}

/// The end of a stored copy's segment: its seal, else its last valid record.
std::optional<replica_position> stored_end(wab::file_io& io, const std::string& path, std::uint64_t seq) {
  const int fd = io.open_existing(path);
  if (fd < 0) return std::nullopt;
  const auto header = wab::read_segment_header(io, fd);
  const std::int64_t size = io.size(fd);
  std::optional<replica_position> out;
  // What a crashed run wrote may still be only in the page cache: synced
  // before it is claimed as held.
  if (header && size >= 0 && io.fdatasync(fd) == 0) {
    replica_position p;
    p.sequence = seq;
    if (const auto seal = wab::usable_seal(header.value(), static_cast<std::uint64_t>(size))) {
      p.offset = seal->data_end;
      p.next_index = seal->records + 1;
      p.sealed = true;
    } else {
      wab::segment_reader reader(io, fd, header.value(), static_cast<std::uint64_t>(size));
      while (reader.advance()) {
      }
      p.offset = reader.valid_end();
      p.next_index = reader.next_index();
    }
    out = p;
  }
  io.close(fd);
  return out;
}

struct copy_state {
  std::uint16_t origin = 0, shard = 0;
  std::string dir;
  replica_position synced;  // what the answers may claim
  std::shared_ptr<wab::segment_writer> open;  // the segment being appended to
  bool dirty = false;       // written since the last sync
  bool seal_after_sync = false;
  bool released = false;    // a failover drain has it
  std::uint64_t incarnation = 0;  // the origin's life it is of (0: not known yet)
  std::string last_trouble;
};

/// Calls `f(origin, shard, dir)` for each `<root>/node_<origin>[...]/shard_NN`.
template <class F>
void for_each_shard_dir(const std::string& root, F f) {
  std::error_code ec;
  for (const auto& node : std::filesystem::directory_iterator(root, ec)) {
    const std::string n = node.path().filename().string();
    if (n.rfind("node_", 0) != 0) continue;
    const auto origin = static_cast<std::uint16_t>(std::strtoul(n.c_str() + 5, nullptr, 10));
    std::error_code ec2;
    for (const auto& shard : std::filesystem::directory_iterator(node.path(), ec2)) {
      const std::string sn = shard.path().filename().string();
      if (sn.rfind("shard_", 0) == 0)
        f(origin, static_cast<std::uint16_t>(std::strtoul(sn.c_str() + 6, nullptr, 10)), shard.path().string());
    }
  }
}

/// Whether `dir` holds a segment file.
bool holds_segments(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (wab::parse_segment_file_name(e.path().filename().string())) return true;
  return false;
}

class replica_store_state {
 public:
  static inline const char* name = "replica_store";
  using pointer = replica_store_actor::stateful_pointer<replica_store_state>;

  void init(pointer self, replica_store_settings s) {
    self_ = self;
    s_ = std::move(s);
    // Retired copies an earlier run left: repaired (a crash may have come
    // between moving one aside and repairing it) and delivered on.
    for_each_shard_dir(retired_root(), [this](std::uint16_t origin, std::uint16_t shard, const std::string& dir) {
      retired_.push_back({origin, shard, dir});
      repair(dir);
      if (s_.retired) s_.retired(origin, shard, dir);
    });
    for_each_shard_dir(s_.root, [this](std::uint16_t origin, std::uint16_t shard, const std::string&) {
      copy(origin, shard);
    });
  }

  caf::result<replica_position> on_chunk(replica_chunk& c) {
    auto& cp = copy(c.origin, c.shard);
    if (cp.released) return answer(cp);
    if (c.incarnation != 0 && cp.incarnation != c.incarnation) {
      // Another life of the origin: the copy of the earlier one is not
      // continued. A copy of no recorded life (written before lives were
      // recorded) is taken for this one only if the chunk goes on from its
      // end; otherwise it is an earlier life's too.
      const auto& at = cp.synced;
      const bool goes_on = (c.sequence == at.sequence && c.offset == at.offset) ||
                           (c.sequence == at.sequence + 1 && at.sealed && !c.skips);
      if ((cp.incarnation != 0 || !goes_on) && holds_segments(cp.dir)) {
        flush();
        // Not moved aside: not continued either (the next life's trims
        // would delete it); the origin asks again later.
        if (!retire(cp)) return answer(cp);
      }
      // Unrecorded, a restart would take the copy for no life's: not taken.
      if (!adopt(cp, c.incarnation)) return answer(cp);
    }
    if (!take(cp, c)) return answer(cp);
    auto promise = self_->make_response_promise<replica_position>();
    waiting_.push_back({&cp, promise});
    if (!flush_scheduled_) {
      flush_scheduled_ = true;
      self_->send(self_, flush_atom::value);  // after what is in the mailbox: one sync for all of it
    }
    return promise;
  }

  /// Where the copy ends; a copy this node does not have is not made for the question.
  replica_position on_position(std::uint16_t origin, std::uint16_t shard) {
    const auto it = copies_.find({origin, shard});
    if (it == copies_.end()) return {origin, shard, 0, 0, 1, false};
    return answer(it->second);
  }

  /// The origin lives as `incarnation`: its copies of another (known) life
  /// are retired. One a failover drain has is left for after the hand-back.
  void on_retire(std::uint16_t origin, std::uint64_t incarnation) {
    for (auto& [key, cp] : copies_)
      if (cp.origin == origin && !cp.released && cp.incarnation != 0 && cp.incarnation != incarnation &&
          holds_segments(cp.dir)) {
        flush();
        if (retire(cp)) adopt(cp, incarnation);
      }
  }

  void on_trim(const replica_trim& t) {
    auto& cp = copy(t.origin, t.shard);
    if (cp.released) return;  // the failover drain owns the directory now
    // What another life of the origin delivered says nothing of this copy.
    if (cp.incarnation != 0 && t.incarnation != 0 && cp.incarnation != t.incarnation) return;
    if (cp.open && cp.open->sequence() < t.sequence) cp.open.reset();
    // Everything below the trim is delivered: the copy counts as complete up
    // to there, so a chunk of a trimmed segment still waiting for its sync is
    // answered as held (the origin no longer needs it anywhere).
    if (cp.synced.sequence < t.sequence)
      cp.synced = {cp.origin, cp.shard, t.sequence - 1, std::numeric_limits<std::uint64_t>::max(), 1, true};
    bool removed = false;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(cp.dir, ec)) {
      auto seq = wab::parse_segment_file_name(e.path().filename().string());
      if (seq && *seq < t.sequence && s_.io->unlink(e.path().string()) == 0) removed = true;
    }
    if (removed) s_.io->fsync_directory(cp.dir);
    // A failover drain starts where the origin's own drain had come to.
    wab::confirm_cursor at;
    at.sequence = t.sequence;
    at.offset = wab::segment_prefix_size;
    if (int rc = wab::store_cursor(*s_.io, cp.dir, at); rc < 0) trouble(cp, "cannot store a replica's cursor", rc);
  }

  std::vector<replica_position> held() {
    forget_delivered_retired();
    std::vector<replica_position> out;
    for (const auto& [key, cp] : copies_) out.push_back(answer(cp));
    return out;
  }

  /// Released: what was written is synced, then the copy's newest segment
  /// is repaired and sealed where its valid records end (its origin can no
  /// longer add to it), as startup recovery does for a WAB, before a drain
  /// reads it. Given back: its end is read again (the drain delivered and
  /// deleted segments), and its cursor goes back to its first segment: the
  /// origin may have gone on writing a segment the drain had passed, and a
  /// later failover must not skip what it added (duplicates, never loss).
  void on_release(std::uint16_t origin, std::uint16_t shard, bool released) {
    flush();
    auto& cp = copy(origin, shard);
    if (cp.released == released) return;
    cp.released = released;
    cp.open.reset();
    if (released) {
      repair(cp.dir);
      return;
    }
    load_end(cp);
    wab::confirm_cursor from_start;
    from_start.sequence = 1;
    from_start.offset = wab::segment_prefix_size;
    if (int rc = wab::store_cursor(*s_.io, cp.dir, from_start); rc < 0) trouble(cp, "cannot store a replica's cursor", rc);
  }

  void repair(const std::string& dir) {
    try {
      const auto r = wab::recover_shard(*s_.io, dir, s_.quarantine_dir);
      for (const auto& e : r.events) log::write(log_level::warn, e.what, e.fields);
    } catch (const wab::recovery_error& e) {
      log::error("cannot repair a replica before delivering it", {{"dir", dir}, {"error", e.what()}});
    }
  }

  /// Syncs every copy written since the last flush, then answers its chunks.
  void flush() {
    flush_scheduled_ = false;
    for (auto& [key, cp] : copies_) {
      if (!cp.dirty || !cp.open) continue;
      cp.dirty = false;
      int rc = cp.open->sync();
      if (rc == 0 && cp.seal_after_sync) rc = cp.open->seal();
      if (rc < 0) {
        // Nothing written since the last good sync is claimed: the copy
        // resumes from there, cutting off what followed.
        trouble(cp, "replica fdatasync failed; the copy resumes from its last synced record", rc);
        cp.open.reset();
        continue;
      }
      cp.synced = {cp.origin, cp.shard, cp.open->sequence(), cp.open->size(), cp.open->records() + 1,
                   cp.seal_after_sync};
      if (cp.seal_after_sync) cp.open.reset();
      cp.seal_after_sync = false;
    }
    for (auto& w : waiting_) w.promise.deliver(answer(*w.copy));
    waiting_.clear();
  }

 private:
  struct retired_copy {
    std::uint16_t origin, shard;
    std::string dir;
  };

  static replica_position answer(const copy_state& cp) {
    auto p = cp.synced;
    p.incarnation = cp.incarnation;
    return p;
  }

  std::string retired_root() const { return s_.root + "/retired"; }

  bool adopt(copy_state& cp, std::uint64_t incarnation) {
    if (int rc = wab::write_incarnation(cp.dir, incarnation); rc < 0) {
      trouble(cp, "cannot record which life of its origin a replica is of", rc);
      return false;
    }
    cp.incarnation = incarnation;
    return true;
  }

  /// Moves the copy aside, repairs and seals it as for a failover, and has
  /// it delivered; the copy starts empty. False when it could not be moved.
  bool retire(copy_state& cp) {
    finish_open(cp);
    cp.open.reset();
    const std::string life = retired_root() + "/node_" + std::to_string(cp.origin) + "-" +
                             (cp.incarnation != 0 ? wab::incarnation_text(cp.incarnation) : std::string("unrecorded"));
    std::string target = life + "/" + wab::shard_dir_name(cp.shard);
    if (int rc = make_private_dirs(life); rc < 0) {
      trouble(cp, "cannot retire a replica of an earlier life", rc);
      return false;
    }
    std::error_code ec;
    if (std::filesystem::exists(target, ec)) target += "-" + std::to_string(wab::new_incarnation() & 0xffff);
    if (int rc = s_.io->rename(cp.dir, target); rc < 0) {
      trouble(cp, "cannot retire a replica of an earlier life", rc);
      return false;
    }
    s_.io->fsync_directory(life);
    s_.io->fsync_directory(std::filesystem::path(cp.dir).parent_path().string());
    log::warn("a copy of an earlier life of a node is retired; this node delivers it",
              {{"origin", std::to_string(cp.origin)}, {"shard", std::to_string(cp.shard)},
               {"life", wab::incarnation_text(cp.incarnation)}, {"dir", target},
               {"replica_segment", std::to_string(cp.synced.sequence)}});
    if (int rc = make_private_dirs(cp.dir); rc < 0) trouble(cp, "cannot make a replica directory", rc);
    cp.incarnation = 0;
    cp.synced = {cp.origin, cp.shard, 0, 0, 1, false};
    repair(target);
    retired_.push_back({cp.origin, cp.shard, target});
    if (s_.retired) s_.retired(cp.origin, cp.shard, target);
    return true;
  }

  /// Retired copies whose every segment is delivered go, with their drain.
  void forget_delivered_retired() {
    for (auto it = retired_.begin(); it != retired_.end();) {
      if (holds_segments(it->dir)) {
        ++it;
        continue;
      }
      if (s_.retired_done) s_.retired_done(it->dir);  // its drain stops first
      std::error_code ec;
      std::filesystem::remove_all(it->dir, ec);
      const auto life = std::filesystem::path(it->dir).parent_path();
      if (std::filesystem::is_empty(life, ec)) std::filesystem::remove(life, ec);
      log::info("a retired copy of an earlier life is delivered", {{"origin", std::to_string(it->origin)},
                                                                   {"shard", std::to_string(it->shard)},
                                                                   {"dir", it->dir}});
      it = retired_.erase(it);
    }
  }

  copy_state& copy(std::uint16_t origin, std::uint16_t shard) {
    auto [it, fresh] = copies_.try_emplace({origin, shard});
    if (fresh) {
      it->second.origin = origin;
      it->second.shard = shard;
      it->second.dir = replica_shard_dir(s_.root, origin, shard);
      if (int rc = make_private_dirs(it->second.dir); rc < 0) trouble(it->second, "cannot make a replica directory", rc);
      it->second.incarnation = wab::read_incarnation(it->second.dir).value_or(0);
      load_end(it->second);
    }
    return it->second;
  }

  /// Where the stored copy ends: its newest segment's end.
  void load_end(copy_state& cp) {
    std::uint64_t newest = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(cp.dir, ec))
      if (auto seq = wab::parse_segment_file_name(e.path().filename().string())) newest = std::max(newest, *seq);
    cp.synced = {cp.origin, cp.shard, 0, 0, 1, false};
    if (newest == 0) return;
    if (auto end = stored_end(*s_.io, cp.dir + "/" + wab::segment_file_name(newest), newest)) {
      cp.synced = *end;
      cp.synced.origin = cp.origin;
      cp.synced.shard = cp.shard;
    }
  }

  /// Appends the chunk when it continues the copy; false when it does not
  /// (the answer then says where the copy ends, and the origin ships from there).
  bool take(copy_state& cp, const replica_chunk& c) {
    if (c.origin == s_.node) return false;  // nobody holds this node's own records for it
    const auto& at = cp.synced;
    const bool continues = cp.open && cp.open->sequence() == c.sequence && cp.open->size() == c.offset;
    // A copy is a prefix of its origin's WAB: a new segment only once the
    // current one is complete (sealed, or its seal waiting for the sync), or
    // when the origin says it skips what it delivered. A copy that holds
    // nothing takes a first segment only so: the origin, told so, ships
    // from its oldest segment and says it skips; a chunk that does not was
    // shipped against an earlier end of the copy (one a failover drain has
    // since delivered and deleted), and taking it would make the copy claim
    // the segments before it.
    const bool current_complete = cp.open ? cp.seal_after_sync : (at.sequence != 0 && at.sealed);
    const bool next_segment = c.sequence > at.sequence && c.offset == wab::segment_prefix_size && c.first_index == 1 &&
                              (current_complete || c.skips);
    const bool resumes = !cp.open && c.sequence == at.sequence && c.offset == at.offset && !at.sealed;
    if (!continues && !next_segment && !resumes) return false;
    if (!continues && !open_for(cp, c, next_segment)) return false;
    if (!c.bytes.empty()) {
      const auto ends = wab::check_framed_records(c.bytes, wab::segment_header{.sequence = c.sequence}.crc_seed());
      if (!ends || ends->size() != c.records) {
        trouble(cp, "a replica chunk does not hold whole records that check; not taken", -EINVAL);
        return false;
      }
      const auto written = cp.open->append_framed(c.bytes, *ends);
      if (written.error < 0 || written.landed != ends->size()) {
        // Claimed is only what the last good sync covered; the next chunk
        // from there reopens the file and cuts off the rest.
        trouble(cp, "cannot write a replica segment", written.error < 0 ? written.error : -EIO);
        cp.open.reset();
        return false;
      }
    }
    cp.dirty = true;
    cp.seal_after_sync = c.sealed;
    return true;
  }

  /// Syncs (and seals, when its origin did) the segment being appended to,
  /// before the copy moves to another: a chunk answered later must not
  /// count on bytes no sync covered.
  bool finish_open(copy_state& cp) {
    if (!cp.open) return true;
    if (cp.dirty) {
      int rc = cp.open->sync();
      if (rc == 0 && cp.seal_after_sync) rc = cp.open->seal();
      if (rc < 0) {
        trouble(cp, "replica fdatasync failed; the copy resumes from its last synced record", rc);
        cp.open.reset();
        return false;
      }
      cp.synced = {cp.origin, cp.shard, cp.open->sequence(), cp.open->size(), cp.open->records() + 1,
                   cp.seal_after_sync};
      cp.dirty = cp.seal_after_sync = false;
    }
    cp.open.reset();
    return true;
  }

  bool open_for(copy_state& cp, const replica_chunk& c, bool next_segment) {
    if (!finish_open(cp)) return false;
    const std::string path = cp.dir + "/" + wab::segment_file_name(c.sequence);
    // A file already there for a new segment holds nothing synced that was
    // claimed (it is past the copy's end): it starts again from its header.
    auto made = next_segment && !std::filesystem::exists(path)
                    ? wab::segment_writer::create(s_.io, cp.dir, c.shard, c.sequence, wab::wall_clock_ns())
                    : wab::segment_writer::reopen(s_.io, path, c.sequence, c.offset);
    if (!made) {
      trouble(cp, "cannot open a replica segment", made.error());
      return false;
    }
    cp.open = std::move(made).value();
    if (next_segment) keep_cursor_before(cp, c.sequence);
    if (cp.open->size() != c.offset) {  // the file holds less than the copy claimed: read it again
      cp.open.reset();
      load_end(cp);
      return false;
    }
    return true;
  }

  /// A failover drain starts at the copy's cursor, which must not lie past a
  /// segment the copy holds: a drain ended mid-way can have stored one past
  /// a segment it delivered and deleted, which the origin ships again later.
  /// (Each sink's failover drain has a cursor of its own in the copy.)
  void keep_cursor_before(copy_state& cp, std::uint64_t sequence) {
    for (const auto& [sink, at] : wab::load_every_cursor(*s_.io, cp.dir)) {
      if (at.sequence <= sequence) continue;
      wab::confirm_cursor back;
      back.sequence = sequence;
      back.offset = wab::segment_prefix_size;
      if (int rc = wab::store_cursor(*s_.io, cp.dir, back, sink); rc < 0)
        trouble(cp, "cannot store a replica's cursor", rc);
    }
  }

  /// One log line when trouble starts or changes, not one per chunk.
  void trouble(copy_state& cp, const std::string& what, int rc) {
    const std::string line = what + ": " + std::strerror(rc < 0 ? -rc : rc);
    if (line == cp.last_trouble) return;
    cp.last_trouble = line;
    log::error(what, {{"dir", cp.dir}, {"error", std::strerror(rc < 0 ? -rc : rc)}});
  }

  struct waiting_chunk {
    copy_state* copy;
    caf::typed_response_promise<replica_position> promise;
  };

  pointer self_ = nullptr;
  replica_store_settings s_;
  std::map<std::pair<std::uint16_t, std::uint16_t>, copy_state> copies_;
  std::vector<waiting_chunk> waiting_;
  bool flush_scheduled_ = false;
  std::vector<retired_copy> retired_;  // being delivered
};

replica_store_actor::behavior_type replica_store_behavior(replica_store_state::pointer self, replica_store_settings s) {
  log_exceptions(self, "replica_store");
  self->state.init(self, std::move(s));
  return {
      [=](replica_chunk& c) { return self->state.on_chunk(c); },
      [=](position_atom, std::uint16_t origin, std::uint16_t shard) { return self->state.on_position(origin, shard); },
      [=](replica_trim& t) { self->state.on_trim(t); },
      [=](held_atom) { return self->state.held(); },
      [=](release_atom, std::uint16_t origin, std::uint16_t shard, bool released) {
        self->state.on_release(origin, shard, released);
        return done_atom::value;
      },
      [=](retire_atom, std::uint16_t origin, std::uint64_t incarnation) { self->state.on_retire(origin, incarnation); },
      [=](flush_atom) { self->state.flush(); },
      [=](shutdown_atom) {
        self->state.flush();
        self->quit();
        return done_atom::value;
      },
  };
}

}  // namespace

replica_store_actor spawn_replica_store(caf::actor_system& sys, replica_store_settings settings) {
  const auto thread = settings.thread;
  return spawn_on(sys, thread, replica_store_behavior, std::move(settings));
}

}  // namespace weir
