#pragma once
// A file system that never answers: FUSE mounted with nobody serving it.
// Every open, stat or read of a path under it blocks in the kernel, as on
// an NFS mount whose server went away, until the mount is released (then
// they fail with ENOTCONN). Mounting needs root (or CAP_SYS_ADMIN) and
// /dev/fuse; where it is refused the test says so.
#include <filesystem>
#include <string>

namespace weir::test {

class hung_file_system {
 public:
  explicit hung_file_system(std::filesystem::path at);
  ~hung_file_system();
  hung_file_system(const hung_file_system&) = delete;
  hung_file_system& operator=(const hung_file_system&) = delete;

  bool mounted() const { return fuse_fd_ >= 0; }
  /// Why mounting failed, when it did.
  const std::string& error() const { return error_; }
  /// A path under the mount: any use of it blocks until release().
  std::filesystem::path path(const std::string& name) const { return at_ / name; }
  /// Ends the hang: what blocked fails with ENOTCONN, and the mount goes.
  void release();

 private:
  std::filesystem::path at_;
  int fuse_fd_ = -1;
  std::string error_;
};

}  // namespace weir::test
