#include "support/tmpfs_mount.hpp"

#include <sys/mount.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

namespace weir::test {

tmpfs_mount::tmpfs_mount(std::filesystem::path at, std::uint64_t bytes) : at_(std::move(at)) {
  std::filesystem::create_directories(at_);
  const std::string options = "size=" + std::to_string(bytes) + ",mode=0700";
  if (::mount("weir-test", at_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) == 0)
    mounted_ = true;
  else
    error_ = std::strerror(errno);
}

tmpfs_mount::~tmpfs_mount() {
  if (mounted_) ::umount2(at_.c_str(), MNT_DETACH);
}

std::uint64_t tmpfs_mount::free_bytes() const {
  struct statvfs st {};
  if (::statvfs(at_.c_str(), &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
}

}  // namespace weir::test
