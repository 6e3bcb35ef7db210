#pragma once
// The file I/O seam of the WAB. Production code uses posix_file_io; tests
// substitute an implementation that injects EIO, ENOSPC and short writes so
// that every failure path can be driven without a failing disk.
//
// Every call returns 0 (or a byte count) on success and -errno on failure.
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "wire/bytes.hpp"

namespace weir::wab {

class file_io {
 public:
  virtual ~file_io() = default;
  /// Creates a new file (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600) for appending.
  virtual int create_exclusive(const std::string& path) = 0;
  /// Opens an existing file for reading and writing (O_NOFOLLOW).
  virtual int open_existing(const std::string& path) = 0;
  virtual ssize_t pwrite(int fd, const std::uint8_t* data, std::size_t n, std::uint64_t offset) = 0;
  virtual ssize_t pread(int fd, std::uint8_t* data, std::size_t n, std::uint64_t offset) = 0;
  virtual int fdatasync(int fd) = 0;
  virtual int fsync(int fd) = 0;
  virtual int truncate(int fd, std::uint64_t size) = 0;
  virtual int close(int fd) = 0;
  virtual int fsync_directory(const std::string& dir) = 0;
  virtual int rename(const std::string& from, const std::string& to) = 0;
  virtual int unlink(const std::string& path) = 0;
  /// File size, or -errno.
  virtual std::int64_t size(int fd) = 0;
  /// Bytes an unprivileged writer may still use on the file system holding
  /// `dir`, or -errno.
  virtual std::int64_t free_bytes(const std::string& dir) = 0;
  /// The names of the entries in `dir`; 0, or -errno (and `names` is not to
  /// be trusted: a listing that failed part-way is no listing).
  virtual int list_directory(const std::string& dir, std::vector<std::string>& names);
};

class posix_file_io : public file_io {
 public:
  int create_exclusive(const std::string& path) override;
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
};

std::shared_ptr<file_io> default_file_io();

/// Writes all of `data` at `offset`, retrying short writes; -errno on failure.
/// `written`, when given, receives how many bytes landed before any failure.
int pwrite_all(file_io& io, int fd, byte_span data, std::uint64_t offset, std::size_t* written = nullptr);
/// Reads exactly `n` bytes unless the file ends first; returns bytes read or -errno.
ssize_t pread_full(file_io& io, int fd, std::uint8_t* out, std::size_t n, std::uint64_t offset);

}  // namespace weir::wab
