#pragma once
// This process's own TCP connections, as the kernel sees them: which of its
// descriptors are connected to a port, and from which local port.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace weir::test {

/// This process's TCP sockets connected to 127.0.0.1:`port`.
inline std::vector<int> sockets_connected_to(std::uint16_t port) {
  std::vector<int> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::stoi(entry.path().filename().string());
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0 || peer.sin_family != AF_INET) continue;
    if (ntohs(peer.sin_port) == port && peer.sin_addr.s_addr == htonl(INADDR_LOOPBACK)) found.push_back(fd);
  }
  return found;
}

/// The local port of connected socket `fd` (0 if it has none).
inline std::uint16_t local_port(int fd) {
  sockaddr_in self{};
  socklen_t len = sizeof self;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&self), &len) != 0) return 0;
  return ntohs(self.sin_port);
}

}  // namespace weir::test
