#include "support/hung_file_system.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace weir::test {

hung_file_system::hung_file_system(std::filesystem::path at) : at_(std::move(at)) {
  std::filesystem::create_directories(at_);
  const int fd = ::open("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    error_ = std::string("/dev/fuse: ") + std::strerror(errno);
    return;
  }
  // The kernel sends FUSE_INIT and waits for an answer that never comes: until
  // then every request on the mount waits too.
  const std::string options = "fd=" + std::to_string(fd) + ",rootmode=40000,user_id=0,group_id=0";
  if (::mount("weir-hung", at_.c_str(), "fuse", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
    error_ = std::string("mount: ") + std::strerror(errno);
    ::close(fd);
    return;
  }
  fuse_fd_ = fd;
}

void hung_file_system::release() {
  if (fuse_fd_ < 0) return;
  ::close(fuse_fd_);  // aborts the connection: blocked requests fail with ENOTCONN
  fuse_fd_ = -1;
  ::umount2(at_.c_str(), MNT_DETACH);
}

hung_file_system::~hung_file_system() { release(); }

}  // namespace weir::test
