#include "wab/dry_run_file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace weir::wab {

int dry_run_file_io::create_exclusive(const std::string&) {
  const int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  return fd < 0 ? -errno : fd;
}

std::string dry_run_file_io::real_path(const std::string& path) const {
  if (const auto it = moved_.find(path); it != moved_.end()) return it->second;
  return gone_.count(path) ? "" : path;
}

int dry_run_file_io::open_existing(const std::string& name) {
  const std::string path = real_path(name);
  if (path.empty()) return -ENOENT;
  // Non-blocking: a FIFO named like a segment must not hang the reader.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -errno;
  // The real open is read-write, which a directory refuses.
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return -EISDIR;
  }
  return fd;
}

ssize_t dry_run_file_io::pwrite(int, const std::uint8_t*, std::size_t n, std::uint64_t) {
  return static_cast<ssize_t>(n);
}

ssize_t dry_run_file_io::pread(int fd, std::uint8_t* data, std::size_t n, std::uint64_t offset) {
  return real_.pread(fd, data, n, offset);
}

int dry_run_file_io::fdatasync(int) { return 0; }
int dry_run_file_io::fsync(int) { return 0; }
int dry_run_file_io::truncate(int, std::uint64_t) { return 0; }
int dry_run_file_io::close(int fd) { return real_.close(fd); }
int dry_run_file_io::fsync_directory(const std::string&) { return 0; }
int dry_run_file_io::rename(const std::string& from, const std::string& to) {
  const std::string real = real_path(from);
  if (real.empty()) return -ENOENT;
  unlink(from);
  gone_.erase(to);
  if (real == to) moved_.erase(to);
  else moved_[to] = real;
  return 0;
}

int dry_run_file_io::unlink(const std::string& path) {
  if (real_path(path).empty()) return -ENOENT;
  moved_.erase(path);
  gone_.insert(path);
  return 0;
}

int dry_run_file_io::list_directory(const std::string& dir, std::vector<std::string>& names) {
  if (int rc = file_io::list_directory(dir, names); rc < 0) return rc;
  std::erase_if(names, [&](const std::string& n) { return real_path(dir + "/" + n) != dir + "/" + n; });
  const std::string prefix = dir + "/";
  for (const auto& [path, real] : moved_)
    if (path.starts_with(prefix) && path.find('/', prefix.size()) == std::string::npos)
      names.push_back(path.substr(prefix.size()));
  return 0;
}
std::int64_t dry_run_file_io::size(int fd) { return real_.size(fd); }
std::int64_t dry_run_file_io::free_bytes(const std::string& dir) { return real_.free_bytes(dir); }

}  // namespace weir::wab
