#include "runtime/data_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "observability/log.hpp"
#include "runtime/startup_error.hpp"

namespace weir {

namespace {

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace

void ensure_private_directory(const std::string& dir, const std::string& config_key) {
  const std::string what = config_key + " = " + dir;
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    const std::string partial = dir.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0700) == 0) {
      // The umask may have narrowed 0700 further; ours must be exactly 0700.
      // Only a directory made here is ever chmodded: an existing one (a
      // shared /tmp with its sticky bit, a data_dir holding other files)
      // belongs to whoever made it.
      if (::chmod(partial.c_str(), 0700) != 0)
        throw startup_error(what + ": cannot set mode 0700 on " + partial + ": " + errno_text(errno));
    } else if (errno != EEXIST) {
      throw startup_error(what + ": cannot create directory " + partial + ": " + errno_text(errno));
    }
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) throw startup_error(what + ": " + errno_text(errno));
  if (!S_ISDIR(st.st_mode)) throw startup_error(what + ": not a directory");
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    log::warn("directory is writable by other users and has no sticky bit: they can replace weir's files",
              {{"key", config_key}, {"dir", dir}, {"mode", mode}});
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw startup_error(what + ": directory is not writable: " + errno_text(errno));
}

data_dir_lock::data_dir_lock(const std::string& data_dir) {
  const std::string path = data_dir + "/weir.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd_ < 0) throw startup_error("data_dir = " + data_dir + ": cannot open " + path + ": " + errno_text(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char buf[32] = {};
    const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
    std::string holder = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "unknown";
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw startup_error("data_dir = " + data_dir + " is in use by another weir-server (pid " +
                          holder + "); stop it or choose another data_dir");
    throw startup_error("data_dir = " + data_dir + ": cannot lock " + path + ": " + errno_text(err));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    // The pid is informational; the lock itself is what matters.
  }
}

data_dir_lock::~data_dir_lock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace weir
