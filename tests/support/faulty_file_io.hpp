#pragma once
// A file_io that behaves like the real one until told otherwise: the next
// write returns an errno or writes only part of its bytes, the next sync
// returns an errno, every create or open fails. A hook runs inside each fdatasync,
// so a test can look at the world while a sync is in progress (to prove that
// no ack precedes its sync). Used to drive every WAB failure path.
#include <atomic>
#include <cerrno>
#include <functional>

#include "wab/file_io.hpp"

namespace weir::test {

class faulty_file_io final : public wab::posix_file_io {
 public:
  std::atomic<int> fail_next_write{0};           // errno to return once, 0 = none
  std::atomic<std::size_t> short_next_write{0};  // write only this many bytes once
  std::atomic<int> fail_next_sync{0};            // errno for the next fdatasync
  std::atomic<int> fail_creates{0};              // errno for every create while set
  std::atomic<std::int64_t> free_space{-1};      // what free_bytes says; -1 = the truth
  std::atomic<int> fail_reads{0};                // errno for every read while set
  std::atomic<int> fail_opens{0};                // errno for every open_existing while set
  std::atomic<int> fail_lists{0};                // errno for every list_directory while set
  std::atomic<int> opens{0};                     // open_existing calls
  std::atomic<int> writes{0};                    // pwrite calls
  std::atomic<int> syncs{0};                     // fdatasync calls started
  std::atomic<int> syncs_done{0};                // fdatasync calls returned
  /// Called inside every fdatasync, before it returns; set before the actors
  /// run (it is not synchronised).
  std::function<void()> during_sync;

  ssize_t pwrite(int fd, const std::uint8_t* data, std::size_t n, std::uint64_t offset) override {
    ++writes;
    if (int e = fail_next_write.exchange(0)) return -e;
    if (std::size_t s = short_next_write.exchange(0); s > 0 && s < n) {
      wab::posix_file_io::pwrite(fd, data, s, offset);
      fail_next_write = ENOSPC;  // the retry of the rest finds the disk full
      return static_cast<ssize_t>(s);
    }
    return wab::posix_file_io::pwrite(fd, data, n, offset);
  }

  ssize_t pread(int fd, std::uint8_t* data, std::size_t n, std::uint64_t offset) override {
    if (int e = fail_reads.load()) return -e;
    return wab::posix_file_io::pread(fd, data, n, offset);
  }

  int open_existing(const std::string& path) override {
    ++opens;
    if (int e = fail_opens.load()) return -e;
    return wab::posix_file_io::open_existing(path);
  }

  int list_directory(const std::string& dir, std::vector<std::string>& names) override {
    if (int e = fail_lists.load()) return -e;
    return wab::posix_file_io::list_directory(dir, names);
  }

  int create_exclusive(const std::string& path) override {
    if (int e = fail_creates.load()) return -e;
    return wab::posix_file_io::create_exclusive(path);
  }

  std::int64_t free_bytes(const std::string& dir) override {
    const std::int64_t forced = free_space.load();
    return forced >= 0 ? forced : wab::posix_file_io::free_bytes(dir);
  }

  int fdatasync(int fd) override {
    ++syncs;
    int rc = 0;
    if (int e = fail_next_sync.exchange(0)) rc = -e;
    else rc = wab::posix_file_io::fdatasync(fd);
    if (during_sync) during_sync();
    ++syncs_done;
    return rc;
  }
};

}  // namespace weir::test
