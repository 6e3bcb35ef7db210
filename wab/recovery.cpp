#include "wab/recovery.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>

#include "wab/segment_format.hpp"
#include "wab/segment_reader.hpp"
#include "wab/wall_clock.hpp"

namespace weir::wab {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& what, int err) {
  throw recovery_error(what + ": " + std::strerror(err));
}

std::string quarantine_name(const std::string& quarantine_dir, const std::string& shard, const std::string& file) {
  std::string base = quarantine_dir + "/" + shard + "__" + file, name = base;
  for (int n = 1; fs::exists(name); ++n) name = base + "." + std::to_string(n);
  return name;
}

/// Whether the file at `path` holds exactly the `size` bytes of `fd`.
bool same_content(file_io& io, int fd, std::uint64_t size, const std::string& path) {
  const int other = io.open_existing(path);
  if (other < 0) return false;
  bool same = io.size(other) == static_cast<std::int64_t>(size);
  byte_buffer a(1 << 20), b(1 << 20);
  for (std::uint64_t at = 0; same && at < size;) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(a.size(), size - at));
    const ssize_t got_a = pread_full(io, fd, a.data(), want, at), got_b = pread_full(io, other, b.data(), want, at);
    same = got_a == static_cast<ssize_t>(want) && got_b == got_a && std::equal(a.begin(), a.begin() + got_a, b.begin());
    at += want;
  }
  io.close(other);
  return same;
}

/// A copy of this very file already in quarantine: a damaged segment stays
/// in place, and each restart would otherwise add another copy of it.
std::optional<std::string> existing_copy(file_io& io, int fd, std::uint64_t size, const std::string& quarantine_dir,
                                         const std::string& shard, const std::string& file) {
  const std::string base = quarantine_dir + "/" + shard + "__" + file;
  std::string name = base;
  for (int n = 1; fs::exists(name); ++n) {
    if (same_content(io, fd, size, name)) return name;
    name = base + "." + std::to_string(n);
  }
  return std::nullopt;
}

/// Copies `fd` (size bytes) into a new file at `to`, durably.
void copy_file(file_io& io, int fd, std::uint64_t size, const std::string& to) {
  const int out = io.create_exclusive(to);
  if (out < 0) fail("cannot create " + to, -out);
  byte_buffer buf(1 << 20);
  for (std::uint64_t at = 0; at < size;) {
    const ssize_t got = pread_full(io, fd, buf.data(), static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size - at)), at);
    if (got <= 0) {
      io.close(out);
      fail("cannot read while copying to " + to, got < 0 ? static_cast<int>(-got) : EIO);
    }
    if (int rc = pwrite_all(io, out, byte_span(buf.data(), static_cast<std::size_t>(got)), at); rc < 0) {
      io.close(out);
      fail("cannot write " + to, -rc);
    }
    at += static_cast<std::uint64_t>(got);
  }
  const int rc = io.fsync(out);
  io.close(out);
  if (rc < 0) fail("cannot fsync " + to, -rc);
}

struct segment_file {
  std::uint64_t sequence;
  std::string name;
};

std::vector<segment_file> list_segments(const std::string& dir) {
  std::vector<segment_file> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (auto seq = parse_segment_file_name(name)) out.push_back({*seq, name});
  }
  if (ec) throw recovery_error("cannot list " + dir + ": " + ec.message());
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.sequence < b.sequence; });
  return out;
}

}  // namespace

namespace {

void recover_segments(file_io& io, const std::string& shard_dir, const std::string& quarantine_dir, std::int64_t now_ns,
                      shard_recovery& result) {
  const std::string shard = fs::path(shard_dir).filename().string();
  bool dir_changed = false, quarantine_changed = false;

  const auto segments = list_segments(shard_dir);
  for (const auto& seg : segments) {
    result.next_sequence = std::max(result.next_sequence, seg.sequence + 1);
    // Only the newest segment was being appended to when the daemon stopped:
    // a torn write can end it, and nothing else.
    const bool was_open = &seg == &segments.back();
    const std::string path = shard_dir + "/" + seg.name;
    const int fd = io.open_existing(path);
    if (fd < 0) fail("cannot open " + path, -fd);
    const std::int64_t size = io.size(fd);
    if (size < 0) {
      io.close(fd);
      fail("cannot stat " + path, static_cast<int>(-size));
    }

    std::uint8_t header[segment_header_size] = {};
    const ssize_t got = pread_full(io, fd, header, sizeof header, 0);
    auto decoded = decode_segment_header(byte_span(header, got > 0 ? static_cast<std::size_t>(got) : 0));
    const bool all_zero = std::all_of(header, header + std::max<ssize_t>(got, 0), [](std::uint8_t b) { return b == 0; });
    if (!decoded && was_open && static_cast<std::uint64_t>(size) <= segment_header_size && all_zero) {
      // The daemon stopped while making this segment, before its header was
      // synced: the writer appends only once that is done, so it never held
      // a record. Not damage: it goes.
      io.close(fd);
      if (int rc = io.unlink(path); rc < 0) fail("cannot remove " + path, -rc);
      result.events.push_back({recovery_event::severity::warning, "segment whose creation was interrupted removed",
                               {{"segment", path}, {"bytes", std::to_string(size)}}});
      dir_changed = true;
      continue;
    }
    if (!decoded) {
      io.close(fd);
      const std::string to = quarantine_name(quarantine_dir, shard, seg.name);
      if (int rc = io.rename(path, to); rc < 0) fail("cannot move " + path + " to quarantine", -rc);
      result.events.push_back({recovery_event::severity::error, "segment header unreadable; moved to quarantine",
                               {{"segment", path}, {"reason", std::string(name_of(decoded.error()))}, {"quarantine", to}}});
      ++result.quarantined_segments;
      dir_changed = quarantine_changed = true;
      continue;
    }

    segment_reader reader(io, fd, static_cast<std::uint64_t>(size), segment_header_size, 1,
                          resync_window_for(decoded.value(), now_ns));
    while (reader.advance()) {
    }
    const scan_stop stop = reader.stop();
    if (stop == scan_stop::io_error) {
      io.close(fd);
      fail("cannot read " + path, reader.error());
    }
    const bool bad_tail = reader.valid_end() < static_cast<std::uint64_t>(size);
    const bool torn_write = was_open && reader.damaged() == 0 &&
                            (stop == scan_stop::torn_tail || stop == scan_stop::zero_tail);
    if (reader.damaged() > 0 || (bad_tail && !torn_write)) {
      // Damage, not a torn write: keep the file as it was for inspection
      // before anything is cut, and say what was lost.
      auto to = existing_copy(io, fd, static_cast<std::uint64_t>(size), quarantine_dir, shard, seg.name);
      const bool copied_before = to.has_value();
      if (!copied_before) {
        to = quarantine_name(quarantine_dir, shard, seg.name);
        copy_file(io, fd, static_cast<std::uint64_t>(size), *to);
        quarantine_changed = true;
        ++result.quarantined_segments;
      }
      result.damaged_records += reader.damaged() - reader.recovered();
      result.events.push_back(
          {recovery_event::severity::error,
           copied_before ? "segment damaged (its copy is already in quarantine); every record that checks is kept"
                         : "segment damaged; copied to quarantine, every record that checks is kept",
           {{"segment", path},
            {"first_damage_offset", std::to_string(reader.first_damage().value_or(reader.valid_end()))},
            {"damaged_records_skipped", std::to_string(reader.damaged())},
            {"of_them_recovered", std::to_string(reader.recovered())},
            {"records_kept", std::to_string(reader.records_read())},
            {"damaged_tail_bytes", std::to_string(static_cast<std::uint64_t>(size) - reader.valid_end())},
            {"quarantine", *to}}});
    }
    if (bad_tail) {
      if (int rc = io.truncate(fd, reader.valid_end()); rc < 0) {
        io.close(fd);
        fail("cannot truncate " + path, -rc);
      }
      if (int rc = io.fsync(fd); rc < 0) {
        io.close(fd);
        fail("cannot fsync " + path, -rc);
      }
      ++result.truncated_segments;
      if (torn_write)
        result.events.push_back({recovery_event::severity::warning, "segment tail truncated at the last valid record",
                                 {{"segment", path}, {"why", std::string(name_of(stop))},
                                  {"removed_bytes", std::to_string(static_cast<std::uint64_t>(size) - reader.valid_end())}}});
    }
    io.close(fd);
    result.records += reader.records_read();
    result.segments.push_back({seg.sequence, path, reader.records_read(), reader.valid_end()});
  }
  if (dir_changed) io.fsync_directory(shard_dir);
  if (quarantine_changed) io.fsync_directory(quarantine_dir);
}

}  // namespace

shard_recovery recover_shard(file_io& io, const std::string& shard_dir, const std::string& quarantine_dir,
                             std::int64_t now_ns) {
  shard_recovery result;
  try {
    recover_segments(io, shard_dir, quarantine_dir, now_ns, result);
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
