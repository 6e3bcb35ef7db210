#include "daemon/tcp_recovery.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstddef>

namespace weir {

std::chrono::nanoseconds tcp_loss_recovery_time(int fd) {
  tcp_info info{};
  socklen_t len = sizeof info;
  // A Unix socket answers EOPNOTSUPP: no loss, no recovery.
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 || len < offsetof(tcp_info, tcpi_rto) + sizeof info.tcpi_rto)
    return {};
  return 2 * std::chrono::microseconds(info.tcpi_rto);
}

}  // namespace weir
