#include "wab/segment_writer.hpp"

#include <algorithm>
#include <filesystem>

namespace weir::wab {

outcome<std::shared_ptr<segment_writer>, int> segment_writer::create(std::shared_ptr<file_io> io,
                                                                     const std::string& shard_dir,
                                                                     std::uint16_t shard, std::uint64_t sequence,
                                                                     std::int64_t now_ns, std::string file_name) {
  const std::string file = file_name.empty() ? segment_file_name(sequence) : std::move(file_name);
  const std::string path = shard_dir + "/" + file;
  const int fd = io->create_exclusive(path);
  if (fd < 0) return fd;
  const auto header = encode_segment_header({shard, sequence, now_ns});
  int rc = pwrite_all(*io, fd, header, 0);
  if (rc == 0) rc = io->fdatasync(fd);
  if (rc == 0) rc = io->fsync_directory(shard_dir);
  if (rc < 0) {
    io->close(fd);
    io->unlink(path);  // never acked anything; leave no half-made file behind
    return rc;
  }
  const std::string name = std::filesystem::path(shard_dir).filename().string() + "/" + file;
  return std::shared_ptr<segment_writer>(new segment_writer(std::move(io), fd, path, name, sequence));
}

segment_writer::segment_writer(std::shared_ptr<file_io> io, int fd, std::string path, std::string name,
                               std::uint64_t sequence)
    : io_(std::move(io)), fd_(fd), path_(std::move(path)), name_(std::move(name)), sequence_(sequence) {}

segment_writer::~segment_writer() { io_->close(fd_); }

append_result segment_writer::append(const std::vector<byte_span>& payloads, std::int64_t ingest_ts_ns) {
  append_result r{records_ + 1, size_, 0, 0};
  if (append_closed_) {
    r.error = -EIO;
    return r;
  }
  scratch_.clear();
  record_ends_.clear();
  for (auto p : payloads) {
    append_record(scratch_, ingest_ts_ns, p);
    record_ends_.push_back(scratch_.size());
  }
  std::size_t written = 0;
  r.error = pwrite_all(*io_, fd_, scratch_, size_, &written);
  if (r.error < 0) {
    // A disk that fills mid-group still holds the records before the failure
    // whole; keep those and cut the torn one off so the file ends cleanly.
    r.landed = static_cast<std::size_t>(
        std::upper_bound(record_ends_.begin(), record_ends_.end(), written) - record_ends_.begin());
    written = r.landed == 0 ? 0 : record_ends_[r.landed - 1];
    io_->truncate(fd_, size_ + written);
    append_closed_ = true;
  } else {
    r.landed = payloads.size();
  }
  size_ += written;
  records_ += r.landed;
  r.end_offset = size_;
  return r;
}

int segment_writer::sync() {
  std::lock_guard<std::mutex> guard(sync_mutex_);
  if (sync_failed_) return -EIO;
  const int rc = io_->fdatasync(fd_);
  if (rc < 0) {
    sync_failed_ = true;
    append_closed_ = true;
  }
  return rc;
}

}  // namespace weir::wab
