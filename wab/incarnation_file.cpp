#include "wab/incarnation_file.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <fstream>

namespace weir::wab {

namespace {

int sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -errno;
  const int rc = ::fsync(fd) == 0 ? 0 : -errno;
  ::close(fd);
  return rc;
}

}  // namespace

std::string incarnation_text(std::uint64_t incarnation) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(incarnation));
  return buf;
}

std::optional<std::uint64_t> read_incarnation(const std::string& dir) {
  std::ifstream in(dir + "/" + incarnation_file_name);
  std::string text;
  if (!std::getline(in, text) || text.size() != 16) return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (err != std::errc() || end != text.data() + text.size() || value == 0) return std::nullopt;
  return value;
}

int write_incarnation(const std::string& dir, std::uint64_t incarnation) {
  const std::string path = dir + "/" + incarnation_file_name, tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return -errno;
  const std::string text = incarnation_text(incarnation) + "\n";
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!written) return -(err ? err : EIO);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return -errno;
  return sync_directory(dir);
}

std::uint64_t new_incarnation() {
  std::uint64_t value = 0;
  while (value == 0)
    if (::getrandom(&value, sizeof value, 0) != static_cast<ssize_t>(sizeof value)) value = 0;
  return value;
}

}  // namespace weir::wab
