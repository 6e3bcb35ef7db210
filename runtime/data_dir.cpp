#include "runtime/data_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "runtime/startup_error.hpp"

namespace weir {

namespace {

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace

void ensure_private_directory(const std::string& dir, const std::string& config_key) {
  std::string partial;
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    partial = dir.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST)
      throw startup_error(config_key + " = " + dir + ": cannot create directory " + partial + ": " +
                          errno_text(errno));
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    throw startup_error(config_key + " = " + dir + ": " + errno_text(errno));
  if (!S_ISDIR(st.st_mode)) throw startup_error(config_key + " = " + dir + ": not a directory");
  if ((st.st_mode & 0777) != 0700 && ::chmod(dir.c_str(), 0700) != 0)
    throw startup_error(config_key + " = " + dir + ": cannot set mode 0700: " + errno_text(errno));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw startup_error(config_key + " = " + dir + ": directory is not writable: " + errno_text(errno));
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
