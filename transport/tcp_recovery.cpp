#include "transport/tcp_recovery.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstddef>

namespace weir {

std::chrono::nanoseconds tcp_loss_recovery_time(int fd) {
  tcp_info info{};
  socklen_t len = sizeof info;
  // A Unix socket answers EOPNOTSUPP: no loss, no recovery.
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 ||
      len < offsetof(tcp_info, tcpi_rcv_rtt) + sizeof info.tcpi_rcv_rtt)
    return {};
  // The daemon mostly receives: its own retransmission timeout follows its
  // small replies and misses a deep queue on the peer's way in, which the
  // receive round trip (measured from the data) does see.
  // Three: the peer's own timeout runs longer than ours once its queue fills.
  return 3 * std::chrono::microseconds(std::max(info.tcpi_rto, info.tcpi_rcv_rtt));
}

}  // namespace weir
