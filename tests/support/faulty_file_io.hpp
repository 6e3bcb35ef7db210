#pragma once
// A file_io that behaves like the real one until told to fail: the next
// write returns an errno or writes only part of its bytes, the next sync
// returns an errno. Used to drive every WAB failure path.
#include <atomic>
#include <cerrno>

#include "runtime/wab/file_io.hpp"

namespace weir::test {

class faulty_file_io final : public wab::posix_file_io {
 public:
  std::atomic<int> fail_next_write{0};      // errno to return once, 0 = none
  std::atomic<std::size_t> short_next_write{0};  // write only this many bytes once
  std::atomic<int> fail_next_sync{0};       // errno for the next fdatasync
  std::atomic<int> syncs{0};

  ssize_t pwrite(int fd, const std::uint8_t* data, std::size_t n, std::uint64_t offset) override {
    if (int e = fail_next_write.exchange(0)) return -e;
    if (std::size_t s = short_next_write.exchange(0); s > 0 && s < n) {
      wab::posix_file_io::pwrite(fd, data, s, offset);
      fail_next_write = ENOSPC;  // the retry of the rest finds the disk full
      return static_cast<ssize_t>(s);
    }
    return wab::posix_file_io::pwrite(fd, data, n, offset);
  }
  int fdatasync(int fd) override {
    ++syncs;
    if (int e = fail_next_sync.exchange(0)) return -e;
    return wab::posix_file_io::fdatasync(fd);
  }
};

}  // namespace weir::test
