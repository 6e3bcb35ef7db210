#include "files/regular_file.hpp"

#include "files/time_limit.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace weir {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

std::string cannot_read(int error) { return std::string("cannot read it: ") + std::strerror(error); }

/// Opens `path` without blocking and checks what it is; -1 and `why` when refused.
int open_regular(const std::string& path, std::size_t max_bytes, std::string& why, std::size_t& size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    why = cannot_read(errno);
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    why = std::string("cannot stat it: ") + std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = std::string("not a regular file (") + kind_of(st.st_mode) + ")";
  } else if (static_cast<std::uintmax_t>(st.st_size) > max_bytes) {
    why = "larger than " + std::to_string(max_bytes) + " bytes";
  } else {
    size = static_cast<std::size_t>(st.st_size);
    return fd;
  }
  ::close(fd);
  return -1;
}

std::string read_now(const std::string& path, std::size_t max_bytes, std::string& out) {
  std::string why;
  std::size_t size = 0;
  const int fd = open_regular(path, max_bytes, why, size);
  if (fd < 0) return why;
  out.assign(max_bytes + 1, '\0');
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      why = cannot_read(errno);
      break;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (!why.empty()) return why;
  if (got > max_bytes) return "larger than " + std::to_string(max_bytes) + " bytes";  // it grew after the check
  out.resize(got);
  return "";
}

std::string check_now(const std::string& path, std::size_t max_bytes) {
  std::string why;
  std::size_t size = 0;
  const int fd = open_regular(path, max_bytes, why, size);
  if (fd >= 0) ::close(fd);
  return why;
}

}  // namespace

std::string read_regular_file(const std::string& path, std::size_t max_bytes, std::string& out) {
  return read_within([path, max_bytes](std::string& data) { return read_now(path, max_bytes, data); }, out);
}

bool names_missing_file(const std::string& why) { return why == cannot_read(ENOENT); }

std::string check_regular_file(const std::string& path, std::size_t max_bytes) {
  std::string unused;
  return read_within([path, max_bytes](std::string&) { return check_now(path, max_bytes); }, unused);
}

}  // namespace weir
