#include "bench/unix_socket.hpp"

#include <stdlib.h>
#include <sys/socket.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace weir::bench {

namespace {

bool fits(const std::string& path) { return path.size() < sizeof(sockaddr_un::sun_path); }

}  // namespace

sockaddr_un unix_address(const std::string& path) {
  if (!fits(path))
    throw std::runtime_error("the Unix socket path " + path + " is " + std::to_string(path.size()) +
                             " bytes; it must be under " + std::to_string(sizeof(sockaddr_un::sun_path)));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

socket_place::socket_place(const std::string& dir, const std::string& name) : path_(dir + "/" + name) {
  if (fits(path_)) return;
  std::string made = "/tmp/weir-bench-XXXXXX";
  if (!::mkdtemp(made.data())) throw std::runtime_error("cannot create a socket directory under /tmp");
  own_dir_ = made;
  path_ = own_dir_ + "/" + name;
  unix_address(path_);  // a name too long even there
}

socket_place::~socket_place() {
  if (own_dir_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(own_dir_, ignored);
}

}  // namespace weir::bench
