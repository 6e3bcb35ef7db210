#include "wab/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

namespace weir::wab {

namespace {

int result(int rc) { return rc < 0 ? -errno : rc; }

}  // namespace

int file_io::list_directory(const std::string& dir, std::vector<std::string>& names) {
  names.clear();
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) names.push_back(it->path().filename().string());
  return ec ? -(ec.value() ? ec.value() : EIO) : 0;
}

int posix_file_io::create_exclusive(const std::string& path) {
  return result(::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
}

int posix_file_io::open_existing(const std::string& path) {
  return result(::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
}

ssize_t posix_file_io::pwrite(int fd, const std::uint8_t* data, std::size_t n, std::uint64_t offset) {
  const ssize_t r = ::pwrite(fd, data, n, static_cast<off_t>(offset));
  return r < 0 ? -errno : r;
}

ssize_t posix_file_io::pread(int fd, std::uint8_t* data, std::size_t n, std::uint64_t offset) {
  const ssize_t r = ::pread(fd, data, n, static_cast<off_t>(offset));
  return r < 0 ? -errno : r;
}

int posix_file_io::fdatasync(int fd) { return result(::fdatasync(fd)); }
int posix_file_io::fsync(int fd) { return result(::fsync(fd)); }
int posix_file_io::truncate(int fd, std::uint64_t size) { return result(::ftruncate(fd, static_cast<off_t>(size))); }
int posix_file_io::close(int fd) { return result(::close(fd)); }

int posix_file_io::fsync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -errno;
  const int rc = result(::fsync(fd));
  ::close(fd);
  return rc;
}

int posix_file_io::rename(const std::string& from, const std::string& to) {
  return result(::rename(from.c_str(), to.c_str()));
}

int posix_file_io::unlink(const std::string& path) { return result(::unlink(path.c_str())); }

std::int64_t posix_file_io::size(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return -errno;
  return st.st_size;
}

std::shared_ptr<file_io> default_file_io() {
  static auto io = std::make_shared<posix_file_io>();
  return io;
}

std::int64_t posix_file_io::free_bytes(const std::string& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) return -errno;
  return static_cast<std::int64_t>(st.f_bavail) * static_cast<std::int64_t>(st.f_frsize);
}

int pwrite_all(file_io& io, int fd, byte_span data, std::uint64_t offset, std::size_t* written) {
  std::size_t done = 0;
  int rc = 0;
  while (done < data.size()) {
    const ssize_t n = io.pwrite(fd, data.data() + done, data.size() - done, offset + done);
    if (n == -EINTR) continue;
    if (n <= 0) {
      rc = n < 0 ? static_cast<int>(n) : -EIO;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (written) *written = done;
  return rc;
}

ssize_t pread_full(file_io& io, int fd, std::uint8_t* out, std::size_t n, std::uint64_t offset) {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t r = io.pread(fd, out + done, n - done, offset + done);
    if (r == -EINTR) continue;
    if (r < 0) return r;
    if (r == 0) break;
    done += static_cast<std::size_t>(r);
  }
  return static_cast<ssize_t>(done);
}

}  // namespace weir::wab
