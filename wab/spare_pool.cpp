#include "wab/spare_pool.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <utility>
#include <vector>

#include "wab/segment_reader.hpp"

namespace weir::wab {

namespace fs = std::filesystem;

std::optional<std::uint64_t> parse_spare_file_name(std::string_view name, std::string_view suffix) {
  constexpr std::string_view prefix = "spare_";
  if (name.size() <= prefix.size() + suffix.size() || name.substr(0, prefix.size()) != prefix ||
      name.substr(name.size() - suffix.size()) != suffix)
    return std::nullopt;
  const std::string_view digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;
  return v;
}

spare_pool::spare_pool(std::shared_ptr<file_io> io, std::string shard_dir, std::uint64_t segment_bytes,
                       std::uint32_t keep, std::uint64_t min_free_bytes)
    : io_(std::move(io)),
      dir_(std::move(shard_dir)),
      segment_bytes_(segment_bytes),
      keep_(keep),
      min_free_bytes_(min_free_bytes) {}

std::string spare_pool::spare_path(std::uint64_t n, const char* suffix) const {
  char buf[40];
  std::snprintf(buf, sizeof buf, "spare_%08llu%s", static_cast<unsigned long long>(n), suffix);
  return dir_ + "/" + buf;
}

int spare_pool::adopt() {
  std::lock_guard<std::mutex> guard(mutex_);
  std::error_code ec;
  bool removed = false;
  std::vector<std::pair<std::uint64_t, std::string>> found;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    if (auto n = parse_spare_file_name(name)) {
      next_number_ = std::max(next_number_, *n + 1);
      found.emplace_back(*n, e.path().string());
    } else if (auto t = parse_spare_file_name(name, ".tmp")) {
      next_number_ = std::max(next_number_, *t + 1);
      removed = io_->unlink(e.path().string()) == 0 || removed;
    }
  }
  if (ec) return -(ec.value() ? ec.value() : EIO);
  // In number order, not the directory's (which differs between file
  // systems): the same spares are kept, and handed out in the same order,
  // on every file system.
  std::sort(found.begin(), found.end());
  for (auto& [number, path] : found) {
    // More than the pool keeps (the setting was lowered) are given back to
    // the disk, and so is a version-1 segment an earlier release recycled
    // (see recycle) or one whose header was damaged.
    if (ready_.size() < keep_ && reusable(path)) ready_.push_back(std::move(path));
    else removed = io_->unlink(path) == 0 || removed;
  }
  if (removed) io_->fsync_directory(dir_);
  return 0;
}

std::optional<std::string> spare_pool::take() {
  std::lock_guard<std::mutex> guard(mutex_);
  if (ready_.empty()) return std::nullopt;
  std::string path = std::move(ready_.back());
  ready_.pop_back();
  return path;
}

bool spare_pool::reusable(const std::string& path) const {
  const int fd = io_->open_existing(path);
  if (fd < 0) return false;
  std::array<std::uint8_t, segment_prefix_size> prefix{};
  const ssize_t got = pread_full(*io_, fd, prefix.data(), prefix.size(), 0);
  io_->close(fd);
  if (got != static_cast<ssize_t>(prefix.size())) return false;
  if (std::all_of(prefix.begin(), prefix.end(), [](std::uint8_t b) { return b == 0; })) return true;
  const auto header = decode_segment_header(prefix);
  return header && header.value().version == segment_version;
}

bool spare_pool::full() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return full_locked();
}

bool spare_pool::full_locked() const { return ready_.size() + preparing_ >= keep_; }

int spare_pool::recycle(const std::string& segment_path) {
  if (full()) return 0;
  std::error_code ec;
  const auto size = fs::file_size(segment_path, ec);
  if (ec || size < segment_bytes_) return 0;
  // A version-1 segment's records are checked from a CRC seed of zero, not
  // from its sequence: left in a file a new segment starts in, one of them
  // could pass the new segment's check by chance. Such files go to the disk.
  if (!reusable(segment_path)) return 0;
  std::string to;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (full_locked()) return 0;
    to = spare_path(next_number_++, ".wab");
    ++preparing_;
  }
  const int rc = io_->rename(segment_path, to);
  std::lock_guard<std::mutex> guard(mutex_);
  --preparing_;
  if (rc < 0) return rc;
  ready_.push_back(to);
  return 1;
}

int spare_pool::prepare_one() {
  std::string tmp, path;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (full_locked()) return 0;
    const std::uint64_t n = next_number_++;
    tmp = spare_path(n, ".tmp");
    path = spare_path(n, ".wab");
    ++preparing_;
  }
  auto finish = [&](int rc) {
    std::lock_guard<std::mutex> guard(mutex_);
    --preparing_;
    if (rc == 0) ready_.push_back(path);
    return rc == 0 ? 1 : rc;
  };
  // Room for the spare and for a whole segment besides: a segment that grows
  // as it is written (the one that asked for this spare) must not meet a
  // full disk because the spare took its space.
  const std::int64_t free = io_->free_bytes(dir_);
  if (free >= 0 && static_cast<std::uint64_t>(free) < 2 * segment_bytes_ + min_free_bytes_) return finish(-ENOSPC);
  const int fd = io_->create_exclusive(tmp);
  if (fd < 0) return finish(fd);
  // Written, not fallocated: an unwritten extent still needs a journal
  // commit the first time it is written, which is what a spare avoids.
  const byte_buffer zeros(1 << 20, 0);
  int rc = 0;
  for (std::uint64_t at = 0; rc == 0 && at < segment_bytes_; at += zeros.size()) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(zeros.size(), segment_bytes_ - at));
    rc = pwrite_all(*io_, fd, byte_span(zeros.data(), n), at);
  }
  if (rc == 0) rc = io_->fdatasync(fd);
  io_->close(fd);
  if (rc == 0) rc = io_->rename(tmp, path);
  if (rc < 0) {
    io_->unlink(tmp);
    return finish(rc);
  }
  // A spare whose name is not durable yet is still a spare: after a crash
  // it is at worst a .tmp again, and removed.
  io_->fsync_directory(dir_);
  return finish(0);
}

std::size_t spare_pool::held() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return ready_.size();
}

}  // namespace weir::wab
