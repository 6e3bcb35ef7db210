#include "runtime/wab/segment_writer.hpp"

#include <filesystem>

namespace weir::wab {

outcome<std::unique_ptr<segment_writer>, int> segment_writer::create(std::shared_ptr<file_io> io,
                                                                     const std::string& shard_dir,
                                                                     std::uint16_t shard, std::uint64_t sequence,
                                                                     std::int64_t now_ns) {
  const std::string file = segment_file_name(sequence);
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
  return std::unique_ptr<segment_writer>(new segment_writer(std::move(io), fd, path, name, sequence));
}

segment_writer::segment_writer(std::shared_ptr<file_io> io, int fd, std::string path, std::string name,
                               std::uint64_t sequence)
    : io_(std::move(io)), fd_(fd), path_(std::move(path)), name_(std::move(name)), sequence_(sequence) {}

segment_writer::~segment_writer() { io_->close(fd_); }

outcome<append_result, int> segment_writer::append(const std::vector<byte_span>& payloads,
                                                    std::int64_t ingest_ts_ns) {
  if (retired_) return -EIO;
  scratch_.clear();
  for (auto p : payloads) append_record(scratch_, ingest_ts_ns, p);
  if (int rc = pwrite_all(*io_, fd_, scratch_, size_); rc < 0) {
    // Part of the group may be on disk; cut it off so the file ends cleanly,
    // and stop using this file either way.
    io_->truncate(fd_, size_);
    retired_ = true;
    return rc;
  }
  const append_result r{records_ + 1, size_ + scratch_.size()};
  size_ = r.end_offset;
  records_ += payloads.size();
  return r;
}

int segment_writer::sync() {
  if (retired_) return -EIO;
  const int rc = io_->fdatasync(fd_);
  if (rc < 0) retired_ = true;
  return rc;
}

}  // namespace weir::wab
