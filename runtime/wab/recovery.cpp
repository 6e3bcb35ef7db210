#include "runtime/wab/recovery.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "runtime/log.hpp"
#include "runtime/wab/segment_format.hpp"
#include "runtime/wab/segment_reader.hpp"

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

shard_recovery recover_shard(file_io& io, const std::string& shard_dir, const std::string& quarantine_dir) {
  shard_recovery result;
  const std::string shard = fs::path(shard_dir).filename().string();
  bool dir_changed = false, quarantine_changed = false;

  for (const auto& seg : list_segments(shard_dir)) {
    result.next_sequence = std::max(result.next_sequence, seg.sequence + 1);
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
    if (!decoded) {
      io.close(fd);
      const std::string to = quarantine_name(quarantine_dir, shard, seg.name);
      if (int rc = io.rename(path, to); rc < 0) fail("cannot move " + path + " to quarantine", -rc);
      log::error("segment header unreadable; moved to quarantine",
                 {{"segment", path}, {"reason", std::string(name_of(decoded.error()))}, {"quarantine", to}});
      ++result.quarantined_segments;
      dir_changed = quarantine_changed = true;
      continue;
    }

    segment_reader reader(io, fd, static_cast<std::uint64_t>(size));
    while (reader.next()) {
    }
    const scan_stop stop = reader.stop();
    if (stop == scan_stop::io_error) {
      io.close(fd);
      fail("cannot read " + path, reader.error());
    }
    if (stop == scan_stop::corrupt) {
      const std::string to = quarantine_name(quarantine_dir, shard, seg.name);
      copy_file(io, fd, static_cast<std::uint64_t>(size), to);
      quarantine_changed = true;
      ++result.quarantined_segments;
      log::error("segment corrupt in the middle; copied to quarantine, keeping its valid prefix",
                 {{"segment", path}, {"valid_records", std::to_string(reader.records_read())},
                  {"valid_bytes", std::to_string(reader.valid_end())}, {"quarantine", to}});
    }
    if (reader.valid_end() < static_cast<std::uint64_t>(size)) {
      if (int rc = io.truncate(fd, reader.valid_end()); rc < 0) {
        io.close(fd);
        fail("cannot truncate " + path, -rc);
      }
      if (int rc = io.fsync(fd); rc < 0) {
        io.close(fd);
        fail("cannot fsync " + path, -rc);
      }
      ++result.truncated_segments;
      if (stop != scan_stop::corrupt)
        log::warn("segment tail truncated at the last valid record",
                  {{"segment", path}, {"why", name_of(stop)},
                   {"removed_bytes", std::to_string(static_cast<std::uint64_t>(size) - reader.valid_end())}});
    }
    io.close(fd);
    result.records += reader.records_read();
    result.segments.push_back({seg.sequence, path, reader.records_read(), reader.valid_end()});
  }
  if (dir_changed) io.fsync_directory(shard_dir);
  if (quarantine_changed) io.fsync_directory(quarantine_dir);
  return result;
}

}  // namespace weir::wab
