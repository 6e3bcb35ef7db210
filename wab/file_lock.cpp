#include "wab/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace weir::wab {

file_lock::file_lock(std::string path) : path_(std::move(path)) {
  // Without blocking: a FIFO in the file's place must not hang the locker.
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
}

file_lock::~file_lock() { release(); }

file_lock::file_lock(file_lock&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), held_(std::exchange(other.held_, false)) {}

file_lock& file_lock::operator=(file_lock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    held_ = std::exchange(other.held_, false);
  }
  return *this;
}

void file_lock::release() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor drops the lock
  fd_ = -1;
  held_ = false;
}

bool file_lock::lock(bool wait) {
  if (fd_ < 0) return false;
  if (held_) return true;
  int rc;
  do {
    rc = ::flock(fd_, LOCK_EX | (wait ? 0 : LOCK_NB));
  } while (rc != 0 && errno == EINTR);
  held_ = rc == 0;
  return held_;
}

void file_lock::unlock() {
  if (fd_ >= 0 && held_) ::flock(fd_, LOCK_UN);
  held_ = false;
}

bool file_lock::still_named() const {
  struct stat named {}, open {};
  if (fd_ < 0 || ::fstat(fd_, &open) != 0 || ::stat(path_.c_str(), &named) != 0) return false;
  return named.st_dev == open.st_dev && named.st_ino == open.st_ino;
}

}  // namespace weir::wab
