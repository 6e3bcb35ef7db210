#include "support/wire_peer.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "wire/bytes.hpp"
#include "wire/frame.hpp"

namespace weir::test {

wire_peer::wire_peer(const std::string& socket_path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_path.c_str(), sizeof addr.sun_path - 1);
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

wire_peer::~wire_peer() {
  if (fd_ >= 0) ::close(fd_);
}

bool wire_peer::send(const std::vector<std::uint8_t>& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

void wire_peer::half_close() { ::shutdown(fd_, SHUT_WR); }

namespace {

/// Moves complete frames from the front of `buf` into `out`.
void split_frames(std::vector<std::uint8_t>& buf, peer_outcome& out) {
  for (;;) {
    if (buf.size() < wire::header_size) return;
    const std::size_t len = wire::header_size + load_le32(buf.data() + 8) + wire::payload_crc_size;
    if (buf.size() < len) return;
    out.replies.emplace_back(buf.begin(), buf.begin() + static_cast<long>(len));
    buf.erase(buf.begin(), buf.begin() + static_cast<long>(len));
  }
}

}  // namespace

peer_outcome wire_peer::collect(std::chrono::milliseconds quiet) {
  return collect_frames(SIZE_MAX, quiet);
}

peer_outcome wire_peer::collect_frames(std::size_t n, std::chrono::milliseconds limit) {
  peer_outcome out;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (out.replies.size() < n) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    std::uint8_t buf[4096];
    const ssize_t got = ::recv(fd_, buf, sizeof buf, 0);
    if (got <= 0) {
      out.closed = true;
      break;
    }
    pending_.insert(pending_.end(), buf, buf + got);
    split_frames(pending_, out);
  }
  out.stray_bytes = pending_.size();
  return out;
}

}  // namespace weir::test
