#include "runtime/wab/confirm_cursor.hpp"

#include <array>
#include <cstring>

namespace weir::wab {

namespace {

constexpr std::size_t cursor_size = 36;
constexpr std::uint32_t cursor_version = 1;

}  // namespace

std::optional<confirm_cursor> load_cursor(file_io& io, const std::string& shard_dir, bool* damaged) {
  if (damaged) *damaged = false;
  const int fd = io.open_existing(shard_dir + "/" + cursor_file_name);
  if (fd < 0) return std::nullopt;
  std::array<std::uint8_t, cursor_size + 1> b{};
  const ssize_t n = pread_full(io, fd, b.data(), b.size(), 0);
  io.close(fd);
  const bool valid = n == static_cast<ssize_t>(cursor_size) && std::memcmp(b.data(), "WCUR", 4) == 0 &&
                     load_le32(b.data() + 4) == cursor_version &&
                     load_le32(b.data() + 32) == crc32_of(byte_span(b.data(), 32));
  if (!valid) {
    if (damaged) *damaged = true;
    return std::nullopt;
  }
  return confirm_cursor{load_le64(b.data() + 8), load_le64(b.data() + 16), load_le64(b.data() + 24)};
}

int store_cursor(file_io& io, const std::string& shard_dir, const confirm_cursor& c) {
  std::array<std::uint8_t, cursor_size> b{};
  std::memcpy(b.data(), "WCUR", 4);
  store_le32(b.data() + 4, cursor_version);
  store_le64(b.data() + 8, c.sequence);
  store_le64(b.data() + 16, c.offset);
  store_le64(b.data() + 24, c.index);
  store_le32(b.data() + 32, crc32_of(byte_span(b.data(), 32)));
  const std::string tmp = shard_dir + "/" + cursor_file_name + ".tmp";
  io.unlink(tmp);  // left by a crash between create and rename
  const int fd = io.create_exclusive(tmp);
  if (fd < 0) return fd;
  int rc = pwrite_all(io, fd, b, 0);
  if (rc == 0) rc = io.fdatasync(fd);
  io.close(fd);
  if (rc == 0) rc = io.rename(tmp, shard_dir + "/" + cursor_file_name);
  if (rc == 0) rc = io.fsync_directory(shard_dir);
  if (rc < 0) io.unlink(tmp);
  return rc;
}

}  // namespace weir::wab
