#pragma once
// A file_io that behaves like the real one until told otherwise: the next
// write returns an errno or writes only part of its bytes, the next sync
// returns an errno, or syncs block until the test opens the gate. Used to
// drive every WAB failure path and to prove that no ack precedes its sync.
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "wab/file_io.hpp"

namespace weir::test {

class faulty_file_io final : public wab::posix_file_io {
 public:
  std::atomic<int> fail_next_write{0};           // errno to return once, 0 = none
  std::atomic<std::size_t> short_next_write{0};  // write only this many bytes once
  std::atomic<int> fail_next_sync{0};            // errno for the next fdatasync
  std::atomic<int> fail_creates{0};              // errno for every create while set
  std::atomic<int> syncs{0};                     // fdatasync calls started
  std::atomic<int> syncs_done{0};                // fdatasync calls returned

  ssize_t pwrite(int fd, const std::uint8_t* data, std::size_t n, std::uint64_t offset) override {
    if (int e = fail_next_write.exchange(0)) return -e;
    if (std::size_t s = short_next_write.exchange(0); s > 0 && s < n) {
      wab::posix_file_io::pwrite(fd, data, s, offset);
      fail_next_write = ENOSPC;  // the retry of the rest finds the disk full
      return static_cast<ssize_t>(s);
    }
    return wab::posix_file_io::pwrite(fd, data, n, offset);
  }

  int create_exclusive(const std::string& path) override {
    if (int e = fail_creates.load()) return -e;
    return wab::posix_file_io::create_exclusive(path);
  }

  int fdatasync(int fd) override {
    ++syncs;
    {
      std::unique_lock<std::mutex> lock(gate_mutex_);
      gate_.wait(lock, [&] { return !hold_; });
    }
    int rc = 0;
    if (int e = fail_next_sync.exchange(0)) rc = -e;
    else rc = wab::posix_file_io::fdatasync(fd);
    ++syncs_done;
    return rc;
  }

  /// From now on every fdatasync blocks until release().
  void hold_syncs() {
    std::lock_guard<std::mutex> guard(gate_mutex_);
    hold_ = true;
  }
  void release_syncs() {
    {
      std::lock_guard<std::mutex> guard(gate_mutex_);
      hold_ = false;
    }
    gate_.notify_all();
  }

  /// Waits until `n` fdatasync calls have started (at most two seconds).
  bool wait_syncs_started(int n) {
    for (int i = 0; i < 400 && syncs.load() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return syncs.load() >= n;
  }

  ~faulty_file_io() override { release_syncs(); }

 private:
  std::mutex gate_mutex_;
  std::condition_variable gate_;
  bool hold_ = false;
};

}  // namespace weir::test
