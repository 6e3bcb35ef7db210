#include "wab/recovery.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>

#include "wab/confirm_cursor.hpp"
#include "wab/quarantine.hpp"
#include "wab/segment_format.hpp"
#include "wab/segment_reader.hpp"
#include "wab/spare_pool.hpp"
#include "wab/wall_clock.hpp"

namespace weir::wab {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& what, int err) {
  throw recovery_error(what + ": " + std::strerror(err));
}

struct segment_file {
  std::uint64_t sequence;
  std::string name;
};

struct shard_listing {
  std::vector<segment_file> segments;  // in sequence order
  std::vector<std::string> spares;     // spare_N.wab names
};

shard_listing list_shard(const std::string& dir) {
  shard_listing out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (auto seq = parse_segment_file_name(name)) out.segments.push_back({*seq, name});
    else if (parse_spare_file_name(name)) out.spares.push_back(name);
  }
  if (ec) throw recovery_error("cannot list " + dir + ": " + ec.message());
  std::sort(out.segments.begin(), out.segments.end(), [](auto& a, auto& b) { return a.sequence < b.sequence; });
  return out;
}

}  // namespace

namespace {

/// One shard directory's recovery, a segment at a time.
class shard_recoverer {
 public:
  shard_recoverer(file_io& io, const std::string& shard_dir, const std::string& quarantine_dir, std::int64_t now_ns,
                  shard_recovery& result)
      : io_(io),
        shard_dir_(shard_dir),
        quarantine_dir_(quarantine_dir),
        shard_(fs::path(shard_dir).filename().string()),
        now_ns_(now_ns),
        result_(result) {}

  void run() {
    const auto listing = list_shard(shard_dir_);
    const auto& segments = listing.segments;
    cursor_ = span_of(load_every_cursor(io_, shard_dir_)).oldest;
    for (const auto& seg : segments) {
      result_.next_sequence = std::max(result_.next_sequence, seg.sequence + 1);
      // Only the newest segment was being appended to when the daemon
      // stopped: a torn write can end it, and nothing else.
      recover(seg, &seg == &segments.back());
    }
    // A recycled spare still carries the header of the segment it was: the
    // numbering goes on past it, or a new segment given that number could
    // start in the file and read its old records as its own (their CRCs
    // start from the same sequence) — were the confirm cursor, which
    // remembers the numbers, ever lost with every segment delivered.
    for (const auto& name : listing.spares) {
      const auto seq = header_sequence(shard_dir_ + "/" + name);
      if (!seq) continue;
      result_.next_sequence = std::max(result_.next_sequence, *seq + 1);
      // One that holds records of a segment the cursor has not passed was
      // never delivered (only delivered segments become spares; a spare
      // taken for a new segment gets its header before its rename, but no
      // record until after): a segment renamed by hand. Delivered as what it
      // is, under its own name, not reused.
      if ((!cursor_ || *seq >= cursor_->sequence) && holds_records(shard_dir_ + "/" + name))
        misnamed_.push_back({segment_file{*seq, name}, *seq});
    }
    place_misnamed();
    if (dir_changed_) io_.fsync_directory(shard_dir_);
    if (quarantine_changed_) io_.fsync_directory(quarantine_dir_);
  }

 private:
  /// A header that does not check, on a file whose first record checks as
  /// record 1 of the segment its name gives: the header alone was hit, and
  /// the records are that segment's (a reused file's older records would not
  /// check). The file is copied to quarantine, then its header is written
  /// again from the name — the first record's time standing in for the
  /// creation time — and the seal slot, which has a CRC of its own, is kept.
  /// nullopt when the records do not say which segment this is.
  std::optional<segment_header> rebuild_header(int fd, const segment_file& seg, const std::string& path,
                                               std::uint64_t size, const std::uint8_t (&read)[segment_prefix_size],
                                               header_error why) {
    segment_header guess;
    guess.shard = parse_shard_dir_name(shard_).value_or(0);
    guess.sequence = seg.sequence;
    segment_reader reader(io_, fd, guess, size, 0, 1, std::nullopt);
    stored_record first;
    if (!reader.next(first)) {
      if (reader.stop() == scan_stop::io_error) fail("cannot read " + path, reader.error() > 0 ? reader.error() : EIO);
      return std::nullopt;
    }
    guess.created_at_ns = first.ingest_ts_ns;
    const std::string copy = quarantine(fd, seg, size);
    const auto prefix = encode_segment_prefix(guess);
    if (int rc = pwrite_all(io_, fd, byte_span(prefix.data(), segment_header_size), 0); rc < 0)
      fail("cannot write the header of " + path + " again", -rc);
    if (int rc = io_.fdatasync(fd); rc < 0) fail("cannot fsync " + path, -rc);
    result_.events.push_back({recovery_event::severity::error,
                              "segment header damaged; written again from the file name, every record that checks is kept",
                              {{"segment", path}, {"reason", std::string(name_of(why))}, {"quarantine", copy}}});
    // The new header beside the seal slot as read (not read back: a dry run
    // writes nothing).
    std::array<std::uint8_t, segment_prefix_size> now{};
    std::copy(std::begin(read), std::end(read), now.begin());
    std::copy(prefix.begin(), prefix.begin() + segment_header_size, now.begin());
    auto decoded = decode_segment_header(byte_span(now.data(), std::min<std::uint64_t>(size, now.size())));
    return decoded ? std::optional<segment_header>(decoded.value()) : std::optional<segment_header>(guess);
  }

  /// The sequence in a file's header; nullopt without a header that checks.
  std::optional<std::uint64_t> header_sequence(const std::string& path) {
    const int fd = io_.open_existing(path);
    if (fd < 0) return std::nullopt;
    const auto header = read_segment_header(io_, fd);
    io_.close(fd);
    if (!header) return std::nullopt;
    return header.value().sequence;
  }

  /// Whether a record of the segment its header names checks at its start.
  bool holds_records(const std::string& path) {
    const int fd = io_.open_existing(path);
    if (fd < 0) return false;
    bool any = false;
    if (const auto header = read_segment_header(io_, fd)) {
      const std::int64_t size = io_.size(fd);
      segment_reader reader(io_, fd, header.value(), size < 0 ? 0 : static_cast<std::uint64_t>(size), 0, 1, std::nullopt);
      stored_record first;
      any = reader.next(first);
    }
    io_.close(fd);
    return any;
  }

  void recover(const segment_file& seg, bool was_open) {
    const std::string path = shard_dir_ + "/" + seg.name;
    const int fd = io_.open_existing(path);
    if (fd < 0) fail("cannot open " + path, -fd);
    try {
      recover_open(fd, seg, path, was_open);
    } catch (...) {
      io_.close(fd);
      throw;
    }
    io_.close(fd);
  }

  void recover_open(int fd, const segment_file& seg, const std::string& path, bool was_open) {
    const std::int64_t signed_size = io_.size(fd);
    if (signed_size < 0) fail("cannot stat " + path, static_cast<int>(-signed_size));
    const auto size = static_cast<std::uint64_t>(signed_size);

    std::uint8_t prefix[segment_prefix_size] = {};
    const ssize_t got = pread_full(io_, fd, prefix, sizeof prefix, 0);
    // An I/O error is no verdict on the file: moving it aside would take
    // its records out of delivery. The start fails, and the next may read it.
    if (got < 0) fail("cannot read the header of " + path, static_cast<int>(-got));
    const std::size_t have = static_cast<std::size_t>(got);
    auto decoded = decode_segment_header(byte_span(prefix, have));
    if (!decoded && was_open && size <= segment_prefix_size && std::all_of(prefix, prefix + have, [](std::uint8_t b) { return b == 0; })) {
      // The daemon stopped while making this segment, before its header was
      // synced: the writer appends only once that is done, so it never held
      // a record. Not damage: it goes.
      if (int rc = io_.unlink(path); rc < 0) fail("cannot remove " + path, -rc);
      result_.events.push_back({recovery_event::severity::warning, "segment whose creation was interrupted removed",
                                {{"segment", path}, {"bytes", std::to_string(size)}}});
      dir_changed_ = true;
      return;
    }
    if (!decoded)
      if (auto rebuilt = rebuild_header(fd, seg, path, size, prefix, decoded.error())) decoded = *rebuilt;
    if (!decoded) {
      const std::string to = quarantine_name(quarantine_dir_, shard_, seg.name);
      if (int rc = io_.rename(path, to); rc < 0) fail("cannot move " + path + " to quarantine", -rc);
      result_.events.push_back({recovery_event::severity::error, "segment header unreadable; moved to quarantine",
                                {{"segment", path}, {"reason", std::string(name_of(decoded.error()))}, {"quarantine", to}}});
      ++result_.quarantined_segments;
      dir_changed_ = quarantine_changed_ = true;
      return;
    }
    const segment_header& header = decoded.value();
    if (header.sequence != seg.sequence && (!cursor_ || header.sequence >= cursor_->sequence)) {
      // What it holds is segment H's, not yet delivered (a name changed by
      // hand, or two names swapped): it is delivered as what it is, under
      // its own name, once every file has been looked at (place_misnamed).
      misnamed_.push_back({seg, header.sequence});
      return;
    }
    if (header.sequence != seg.sequence) {
      // A reused file whose renames a power loss undid (a delivered segment
      // renamed to a spare, the spare given a new header, neither rename
      // durable yet): nothing was written into it under either name, since
      // the writer appends only after the rename is synced. Kept aside, not
      // read as segment N.
      const std::string to = quarantine_name(quarantine_dir_, shard_, seg.name);
      if (int rc = io_.rename(path, to); rc < 0) fail("cannot move " + path + " to quarantine", -rc);
      result_.events.push_back({recovery_event::severity::warning,
                                "segment file holds another segment's header (a reuse a crash interrupted); moved aside",
                                {{"segment", path}, {"header_sequence", std::to_string(header.sequence)}, {"moved_to", to}}});
      dir_changed_ = quarantine_changed_ = true;
      return;
    }
    if (auto seal = believable_seal(io_, fd, header, size)) {
      // Sealed after a sync covering all of it: its extent is known without
      // reading a record. The drain checks every record as it reads them.
      keep(seg, path, seal->records, seal->data_end);
      return;
    }
    segment_reader reader(io_, fd, header, size, 0, 1, resync_window_for(header, now_ns_));
    while (reader.advance()) {
    }
    if (reader.stop() == scan_stop::io_error) fail("cannot read " + path, reader.error());
    if (header.seal) return finish_cut(fd, seg, path, size, reader, header);
    if (header.version == 1) finish_v1(fd, seg, path, size, reader, was_open);
    else finish_unsealed(fd, seg, path, size, reader, was_open);
  }

  /// A seal that cannot be believed. Most often it claims more than the
  /// file holds: the file was cut after it was sealed, and the records past
  /// its end — synced, so possibly acked — are gone. Damage: copied to
  /// quarantine, the loss counted, and sealed again where its records now
  /// end. A seal whose record count its extent cannot hold is damaged itself:
  /// copied and sealed again the same way, counted as a damaged seal.
  void finish_cut(int fd, const segment_file& seg, const std::string& path, std::uint64_t size,
                  const segment_reader& reader, const segment_header& header) {
    const segment_seal& seal = *header.seal;
    const std::string copy = quarantine(fd, seg, size);
    if (!seal_count_possible(header, seal) || (seal.data_end <= size && reader.valid_end() > seal.data_end)) {
      // Not a cut: the seal itself is damaged (or forged), claiming a count
      // its extent cannot hold, or ending before records that follow it.
      // How many records it stood for is unknown; the ones there are kept,
      // and it is sealed again where they end.
      result_.events.push_back({recovery_event::severity::error,
                                "segment seal claims a record count its extent cannot hold, or ends before records that "
                                "follow it; the seal is not believed: its records are read and it is sealed again; "
                                "copied to quarantine",
                                {{"segment", path},
                                 {"sealed_records", std::to_string(seal.records)},
                                 {"sealed_end", std::to_string(seal.data_end)},
                                 {"records_kept", std::to_string(reader.records_read())},
                                 {"quarantine", copy}}});
      ++result_.damaged_seals;
      return seal_at(fd, seg, path, reader);
    }
    const std::uint64_t lost = seal.records > reader.records_read() ? seal.records - reader.records_read() : 0;
    result_.damaged_records += lost;
    result_.events.push_back({recovery_event::severity::error,
                              "segment shorter than its seal says: records past its end are lost; copied to quarantine",
                              {{"segment", path},
                               {"sealed_end", std::to_string(seal.data_end)},
                               {"file_bytes", std::to_string(size)},
                               {"sealed_records", std::to_string(seal.records)},
                               {"records_kept", std::to_string(reader.records_read())},
                               {"quarantine", copy}}});
    seal_at(fd, seg, path, reader);
  }

  void seal_at(int fd, const segment_file& seg, const std::string& path, const segment_reader& reader) {
    const auto slot = encode_seal(seg.sequence, {reader.records_read(), reader.valid_end()});
    if (int rc = pwrite_all(io_, fd, slot, segment_header_size); rc < 0) fail("cannot seal " + path, -rc);
    if (int rc = io_.fdatasync(fd); rc < 0) fail("cannot fsync " + path, -rc);
    ++result_.sealed_segments;
    keep(seg, path, reader.records_read(), reader.valid_end());
  }

  /// Version 1: the file ends where its records do. A bad tail on the newest
  /// segment is a torn write and is cut; any other bad bytes are damage.
  void finish_v1(int fd, const segment_file& seg, const std::string& path, std::uint64_t size,
                 const segment_reader& reader, bool was_open) {
    const scan_stop stop = reader.stop();
    const bool bad_tail = reader.valid_end() < size;
    const bool torn_write = was_open && reader.damaged() == 0 &&
                            (stop == scan_stop::torn_tail || stop == scan_stop::zero_tail);
    if (reader.damaged() > 0 || (bad_tail && !torn_write)) report_damage(fd, seg, path, size, reader);
    if (bad_tail) {
      if (int rc = io_.truncate(fd, reader.valid_end()); rc < 0) fail("cannot truncate " + path, -rc);
      if (int rc = io_.fsync(fd); rc < 0) fail("cannot fsync " + path, -rc);
      ++result_.truncated_segments;
      if (torn_write)
        result_.events.push_back({recovery_event::severity::warning, "segment tail truncated at the last valid record",
                                  {{"segment", path}, {"why", std::string(name_of(stop))},
                                   {"removed_bytes", std::to_string(size - reader.valid_end())}}});
    }
    keep(seg, path, reader.records_read(), reader.valid_end());
  }

  /// Version 2, unsealed: the segment open when the daemon stopped (or one
  /// whose seal failed). Its records end at the first that does not check —
  /// what follows is unwritten, torn, or an earlier life's bytes of a reused
  /// file, none of which was ever acked — unless a record that checks comes
  /// after it: that is damage. It is sealed now, so no later start reads it.
  void finish_unsealed(int fd, const segment_file& seg, const std::string& path, std::uint64_t size,
                       const segment_reader& reader, bool was_open) {
    if (reader.damaged() > 0) report_damage(fd, seg, path, size, reader);
    if (!was_open)
      result_.events.push_back({recovery_event::severity::warning,
                                "closed segment was never sealed (its last sync failed); kept up to its last valid record",
                                {{"segment", path}, {"records", std::to_string(reader.records_read())}}});
    seal_at(fd, seg, path, reader);
  }

  /// Whether something is named `path`, as the file layer sees it (a
  /// dry run's pretended renames included).
  bool present(const std::string& path) {
    const int fd = io_.open_existing(path);
    if (fd >= 0) io_.close(fd);
    return fd != -ENOENT;
  }

  /// Files whose header names another segment than their name, and not one
  /// the confirm cursor has passed: each is renamed to the name its header
  /// gives and recovered as that segment. All are moved out of the way
  /// first: two files whose names were swapped each stand where the other
  /// belongs. One whose own name is taken by a file that is that segment
  /// already goes to quarantine (both cannot be segment H), and is reported.
  void place_misnamed() {
    if (misnamed_.empty()) return;
    std::vector<std::string> aside;
    for (const auto& [seg, sequence] : misnamed_) {
      const std::string from = shard_dir_ + "/" + seg.name;
      aside.push_back(from + ".misnamed");
      if (int rc = io_.rename(from, aside.back()); rc < 0) fail("cannot move " + from + " out of the way", -rc);
    }
    dir_changed_ = true;
    for (std::size_t i = 0; i < misnamed_.size(); ++i) {
      const auto& [seg, sequence] = misnamed_[i];
      const segment_file own{sequence, segment_file_name(sequence)};
      const std::string to = shard_dir_ + "/" + own.name;
      if (present(to)) {
        const std::string q = quarantine_name(quarantine_dir_, shard_, seg.name);
        if (int rc = io_.rename(aside[i], q); rc < 0) fail("cannot move " + aside[i] + " to quarantine", -rc);
        result_.events.push_back({recovery_event::severity::error,
                                  "segment file holds another segment's header, and that segment is there too; "
                                  "moved to quarantine (its records are not delivered)",
                                  {{"segment", shard_dir_ + "/" + seg.name},
                                   {"header_sequence", std::to_string(sequence)},
                                   {"moved_to", q}}});
        ++result_.quarantined_segments;
        quarantine_changed_ = true;
        continue;
      }
      if (int rc = io_.rename(aside[i], to); rc < 0) fail("cannot rename " + aside[i] + " to " + to, -rc);
      result_.events.push_back({recovery_event::severity::warning,
                                "segment file named for another segment holds this one; renamed to its own name and "
                                "delivered as what it holds",
                                {{"was", shard_dir_ + "/" + seg.name}, {"now", to}}});
      ++result_.renamed_segments;
      result_.next_sequence = std::max(result_.next_sequence, sequence + 1);
      recover(own, false);
    }
    std::sort(result_.segments.begin(), result_.segments.end(),
              [](const recovered_segment& a, const recovered_segment& b) { return a.sequence < b.sequence; });
  }

  /// Damage, not a torn write: the file is kept as it was for inspection
  /// before anything is cut, and the loss is reported.
  void report_damage(int fd, const segment_file& seg, const std::string& path, std::uint64_t size,
                     const segment_reader& reader) {
    const std::string copy = quarantine(fd, seg, size);
    result_.damaged_records += reader.damaged() - reader.recovered();
    result_.events.push_back(
        {recovery_event::severity::error, "segment damaged; every record that checks is kept",
         {{"segment", path},
          {"first_damage_offset", std::to_string(reader.first_damage().value_or(reader.valid_end()))},
          {"damaged_records_skipped", std::to_string(reader.damaged())},
          {"of_them_recovered", std::to_string(reader.recovered())},
          {"records_kept", std::to_string(reader.records_read())},
          {"damaged_tail_bytes", std::to_string(size - reader.valid_end())},
          {"quarantine", copy}}});
  }

  /// Copies a damaged segment to quarantine; says where, or why not. A copy
  /// that fails (a full disk) does not stop the start: a full disk must not
  /// need a human, and the damaged bytes stay in the segment until it is
  /// delivered (a version-1 tail past the damage is cut, and lost with it).
  std::string quarantine(int fd, const segment_file& seg, std::uint64_t size) {
    result_.damaged_at_startup.insert(seg.sequence);
    auto copy = quarantine_copy(io_, fd, size, quarantine_dir_, shard_, seg.name);
    if (!copy) return "not copied: " + copy.error();
    if (copy.value().copied_before) return copy.value().path + " (copied before)";
    ++result_.quarantined_segments;
    return copy.value().path;
  }

  void keep(const segment_file& seg, const std::string& path, std::uint64_t records, std::uint64_t end) {
    result_.records += records;
    result_.segments.push_back({seg.sequence, path, records, end});
  }

  file_io& io_;
  const std::string& shard_dir_;
  const std::string& quarantine_dir_;
  const std::string shard_;
  const std::int64_t now_ns_;
  shard_recovery& result_;
  bool dir_changed_ = false, quarantine_changed_ = false;
  std::optional<confirm_cursor> cursor_;  // the oldest sink cursor: segments below it were delivered to every sink
  std::vector<std::pair<segment_file, std::uint64_t>> misnamed_;  // (file, the segment its header names)
};

}  // namespace

shard_recovery recover_shard(file_io& io, const std::string& shard_dir, const std::string& quarantine_dir,
                             std::int64_t now_ns) {
  shard_recovery result;
  try {
    shard_recoverer(io, shard_dir, quarantine_dir, now_ns, result).run();
  } catch (recovery_error& e) {
    e.events = std::move(result.events);  // repairs made before the failure are still news
    throw;
  }
  return result;
}

shard_recovery recover_shard(file_io& io, const std::string& shard_dir, const std::string& quarantine_dir) {
  return recover_shard(io, shard_dir, quarantine_dir, wall_clock_ns());
}

}  // namespace weir::wab
