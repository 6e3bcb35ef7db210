#pragma once
// An advisory lock (flock) on one file, taken in turn by the daemon's
// dead-letter store and by weir-ctl: the store appends to a dead-letter file
// only while it holds the file's lock, and weir-ctl reads a file it is about
// to requeue or delete only once it holds it, so no letter lands in a file
// after weir-ctl read it. The store never waits: a file weir-ctl holds gets
// no more letters, they go into a new one.
#include <string>

namespace weir::wab {

class file_lock {
 public:
  file_lock() = default;
  /// Opens `path` for locking; not valid() if it cannot (errno tells why).
  explicit file_lock(std::string path);
  ~file_lock();
  file_lock(const file_lock&) = delete;
  file_lock& operator=(const file_lock&) = delete;
  file_lock(file_lock&& other) noexcept;
  file_lock& operator=(file_lock&& other) noexcept;

  bool valid() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  /// Takes the lock; with `wait` false, false at once while another holds it.
  bool lock(bool wait);
  void unlock();
  /// Whether path() still names the file this lock was opened on: not
  /// removed or replaced since (checked while holding the lock, final).
  bool still_named() const;

 private:
  void release();

  std::string path_;
  int fd_ = -1;
  bool held_ = false;
};

}  // namespace weir::wab
