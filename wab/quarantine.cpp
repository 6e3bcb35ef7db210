#include "wab/quarantine.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>

namespace weir::wab {

namespace fs = std::filesystem;

namespace {

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
/// in place, and each restart (or each reader) would otherwise add another.
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

std::string failed(const std::string& what, int err) { return what + ": " + std::strerror(err); }

/// Copies `fd` (size bytes) into a new file at `to`, durably; the error, if any.
std::optional<std::string> copy_file(file_io& io, int fd, std::uint64_t size, const std::string& to) {
  const int out = io.create_exclusive(to);
  if (out < 0) return failed("cannot create " + to, -out);
  byte_buffer buf(1 << 20);
  for (std::uint64_t at = 0; at < size;) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size - at));
    const ssize_t got = pread_full(io, fd, buf.data(), want, at);
    if (got <= 0) {
      io.close(out);
      return failed("cannot read while copying to " + to, got < 0 ? static_cast<int>(-got) : EIO);
    }
    if (int rc = pwrite_all(io, out, byte_span(buf.data(), static_cast<std::size_t>(got)), at); rc < 0) {
      io.close(out);
      return failed("cannot write " + to, -rc);
    }
    at += static_cast<std::uint64_t>(got);
  }
  const int rc = io.fsync(out);
  io.close(out);
  if (rc < 0) return failed("cannot fsync " + to, -rc);
  return std::nullopt;
}

}  // namespace

std::string quarantine_name(const std::string& quarantine_dir, const std::string& shard, const std::string& file) {
  std::string base = quarantine_dir + "/" + shard + "__" + file, name = base;
  for (int n = 1; fs::exists(name); ++n) name = base + "." + std::to_string(n);
  return name;
}

outcome<quarantined, std::string> quarantine_copy(file_io& io, int fd, std::uint64_t size,
                                                  const std::string& quarantine_dir, const std::string& shard,
                                                  const std::string& file) {
  if (auto before = existing_copy(io, fd, size, quarantine_dir, shard, file)) return quarantined{*before, true};
  const std::string to = quarantine_name(quarantine_dir, shard, file);
  if (auto error = copy_file(io, fd, size, to)) return *error;
  if (int rc = io.fsync_directory(quarantine_dir); rc < 0) return failed("cannot fsync " + quarantine_dir, -rc);
  return quarantined{to, false};
}

}  // namespace weir::wab
