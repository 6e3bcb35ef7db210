#pragma once
// A file_io that reads the real files and only pretends to change them:
// every write, truncate, sync, rename and unlink succeeds without touching
// the disk. Startup recovery run through it reports what it would repair at
// the next start, on a WAB that may belong to a running daemon, or sit on a
// read-only copy.
#include "wab/file_io.hpp"

namespace weir::wab {

class dry_run_file_io : public file_io {
 public:
  /// Opens /dev/null: whatever is "written" to the new file goes nowhere.
  int create_exclusive(const std::string& path) override;
  /// Read-only and non-blocking; a directory is refused with EISDIR, as
  /// the real read-write open refuses it.
  int open_existing(const std::string& path) override;
  ssize_t pwrite(int fd, const std::uint8_t* data, std::size_t n, std::uint64_t offset) override;
  ssize_t pread(int fd, std::uint8_t* data, std::size_t n, std::uint64_t offset) override;
  int fdatasync(int fd) override;
  int fsync(int fd) override;
  int truncate(int fd, std::uint64_t size) override;
  int close(int fd) override;
  int fsync_directory(const std::string& dir) override;
  int rename(const std::string& from, const std::string& to) override;
  int unlink(const std::string& path) override;
  std::int64_t size(int fd) override;
  std::int64_t free_bytes(const std::string& dir) override;

 private:
  posix_file_io real_;
};

}  // namespace weir::wab
