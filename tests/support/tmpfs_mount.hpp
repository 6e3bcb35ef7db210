#pragma once
// A small tmpfs mounted for one test: a disk that really fills. Mounting
// needs root (or CAP_SYS_ADMIN); where it is refused the test says so.
#include <cstdint>
#include <filesystem>
#include <string>

namespace weir::test {

class tmpfs_mount {
 public:
  tmpfs_mount(std::filesystem::path at, std::uint64_t bytes);
  ~tmpfs_mount();
  tmpfs_mount(const tmpfs_mount&) = delete;
  tmpfs_mount& operator=(const tmpfs_mount&) = delete;

  bool mounted() const { return mounted_; }
  /// Why mounting failed (strerror), when it did.
  const std::string& error() const { return error_; }
  std::uint64_t free_bytes() const;

 private:
  std::filesystem::path at_;
  bool mounted_ = false;
  std::string error_;
};

}  // namespace weir::test
