#pragma once
// A file_io that reads the real files and only pretends to change them:
// every write, truncate, sync, rename and unlink succeeds without touching
// the disk. Startup recovery run through it reports what it would repair at
// the next start, on a WAB that may belong to a running daemon, or sit on a
// read-only copy. Renames and unlinks are remembered, so that what is read
// afterwards by name (opened, listed) is what the next start would find
// there: two swapped files, renamed to their own names, read as each other.
#include <map>
#include <set>

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
  int list_directory(const std::string& dir, std::vector<std::string>& names) override;

  /// The real file that `path` names after the pretended renames ("" when
  /// it was renamed away or unlinked).
  std::string real_path(const std::string& path) const;

 private:
  posix_file_io real_;
  std::map<std::string, std::string> moved_;  // name now -> the real file it names
  std::set<std::string> gone_;                // real names no longer there
};

}  // namespace weir::wab
