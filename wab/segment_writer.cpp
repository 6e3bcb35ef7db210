#include "wab/segment_writer.hpp"

#include <algorithm>
#include <array>
#include <filesystem>

#include "wab/segment_reader.hpp"

namespace weir::wab {

outcome<std::shared_ptr<segment_writer>, int> segment_writer::create(std::shared_ptr<file_io> io,
                                                                     const std::string& shard_dir,
                                                                     std::uint16_t shard, std::uint64_t sequence,
                                                                     std::int64_t now_ns, std::string file_name,
                                                                     std::string reuse) {
  const std::string file = file_name.empty() ? segment_file_name(sequence) : std::move(file_name);
  const std::string path = shard_dir + "/" + file;
  // A spare is renamed only once its new header is durable: until then it is
  // no segment at all, and a crash leaves it a spare.
  const int fd = reuse.empty() ? io->create_exclusive(path) : io->open_existing(reuse);
  if (fd < 0) {
    // The spare was taken from the pool: nobody else will ever use it.
    if (!reuse.empty()) io->unlink(reuse);
    return fd;
  }
  const auto prefix = encode_segment_prefix({.shard = shard, .sequence = sequence, .created_at_ns = now_ns});
  int rc = pwrite_all(*io, fd, prefix, 0);
  if (rc == 0) rc = io->fdatasync(fd);
  if (rc == 0 && !reuse.empty()) rc = io->rename(reuse, path);
  if (rc == 0) rc = io->fsync_directory(shard_dir);
  const std::int64_t file_size = rc == 0 ? io->size(fd) : 0;
  if (rc == 0 && file_size < 0) rc = static_cast<int>(file_size);
  if (rc < 0) {
    io->close(fd);
    // Never acked anything; leave no half-made file behind (a spare that was
    // not renamed yet goes under its own name).
    if (io->unlink(path) < 0 && !reuse.empty()) io->unlink(reuse);
    return rc;
  }
  const std::string name = std::filesystem::path(shard_dir).filename().string() + "/" + file;
  return std::shared_ptr<segment_writer>(
      new segment_writer(std::move(io), fd, path, name, sequence, static_cast<std::uint64_t>(file_size)));
}

outcome<std::shared_ptr<segment_writer>, int> segment_writer::reopen(std::shared_ptr<file_io> io,
                                                                     const std::string& path,
                                                                     std::uint64_t sequence, std::uint64_t limit) {
  const int fd = io->open_existing(path);
  if (fd < 0) return fd;
  auto fail = [&](int rc) {
    io->close(fd);
    return rc;
  };
  const auto header = read_segment_header(*io, fd);
  const std::int64_t file_size = io->size(fd);
  if (file_size < 0) return fail(static_cast<int>(file_size));
  if (!header || header.value().version != segment_version || header.value().sequence != sequence)
    return fail(-EINVAL);
  segment_reader reader(*io, fd, header.value(),
                        std::min(limit, records_end(header.value(), static_cast<std::uint64_t>(file_size))));
  while (reader.advance()) {
  }
  if (reader.stop() == scan_stop::io_error) return fail(reader.error() < 0 ? reader.error() : -EIO);
  const bool cut = static_cast<std::uint64_t>(file_size) > reader.valid_end();
  if (header.value().seal) {
    const std::array<std::uint8_t, seal_size> unsealed{};
    if (int rc = pwrite_all(*io, fd, unsealed, segment_header_size); rc < 0) return fail(rc);
  }
  if (cut)
    if (int rc = io->truncate(fd, reader.valid_end()); rc < 0) return fail(rc);
  if (header.value().seal || cut)
    if (int rc = io->fdatasync(fd); rc < 0) return fail(rc);
  const auto p = std::filesystem::path(path);
  const std::string name = p.parent_path().filename().string() + "/" + p.filename().string();
  std::shared_ptr<segment_writer> w(
      new segment_writer(std::move(io), fd, path, name, sequence, reader.valid_end()));
  w->size_ = reader.valid_end();
  w->records_ = reader.next_index() - 1;
  return w;
}

segment_writer::segment_writer(std::shared_ptr<file_io> io, int fd, std::string path, std::string name,
                               std::uint64_t sequence, std::uint64_t file_size)
    : io_(std::move(io)),
      fd_(fd),
      path_(std::move(path)),
      name_(std::move(name)),
      sequence_(sequence),
      crc_seed_(segment_header{.sequence = sequence}.crc_seed()),
      file_size_(file_size) {}

segment_writer::~segment_writer() { io_->close(fd_); }

append_result segment_writer::append(const std::vector<byte_span>& payloads, std::int64_t ingest_ts_ns) {
  scratch_.clear();
  record_ends_.clear();
  for (auto p : payloads) {
    append_record(scratch_, crc_seed_, ingest_ts_ns, p);
    record_ends_.push_back(scratch_.size());
  }
  return write_scratch();
}

append_result segment_writer::append_framed(byte_span framed, const std::vector<std::uint64_t>& ends) {
  scratch_.assign(framed.begin(), framed.end());
  record_ends_ = ends;
  return write_scratch();
}

append_result segment_writer::write_scratch() {
  append_result r{records_ + 1, size_, 0, 0};
  if (append_closed_) {
    r.error = -EIO;
    return r;
  }
  std::size_t written = 0;
  r.error = pwrite_all(*io_, fd_, scratch_, size_, &written);
  if (r.error < 0) {
    // A disk that fills mid-group still holds the records before the failure
    // whole; keep those and cut the torn one off so the file ends cleanly.
    r.landed = static_cast<std::size_t>(
        std::upper_bound(record_ends_.begin(), record_ends_.end(), written) - record_ends_.begin());
    written = r.landed == 0 ? 0 : record_ends_[r.landed - 1];
    // A write that grew the file is cut back to its last whole record.
    // Inside a preallocated file the bytes stay. A torn record fails its
    // CRC; but a call that failed may have landed whole records without
    // saying so (`written` counts only what it reported), and unless the
    // seal lands, recovery reads them as records: refused, they have the
    // unknown outcome the protocol gives every refusal.
    // Should the cut fail too, the torn record is still the file's last and
    // reads as a crash's torn tail, and the seal (if it lands) ends before it.
    if (size_ + scratch_.size() > file_size_) io_->truncate(fd_, size_ + written);
    append_closed_ = true;
  } else {
    r.landed = record_ends_.size();
  }
  size_ += written;
  records_ += r.landed;
  r.end_offset = size_;
  return r;
}

int segment_writer::sync() {
  std::lock_guard<std::mutex> guard(sync_mutex_);
  return sync_locked();
}

int segment_writer::sync_locked() {
  if (sealed_) return 0;
  if (sync_failed_) return -EIO;
  const int rc = io_->fdatasync(fd_);
  if (rc < 0) {
    sync_failed_ = true;
    append_closed_ = true;
  }
  return rc;
}

int segment_writer::seal() {
  std::lock_guard<std::mutex> guard(sync_mutex_);
  append_closed_ = true;
  if (sealed_) return 0;  // once: the file may be another segment's by now
  // The seal may claim only records already on the disk.
  if (int rc = sync_locked(); rc < 0) return rc;
  const auto slot = encode_seal(sequence_, {records_, size_});
  int rc = pwrite_all(*io_, fd_, slot, segment_header_size);
  if (rc == 0) rc = io_->fdatasync(fd_);
  if (rc < 0) sync_failed_ = true;  // nothing is left to ack; a later sync proves nothing
  else sealed_ = true;
  return rc;
}

}  // namespace weir::wab
