#pragma once
// How long a TCP connection may deliver nothing while it recovers a lost
// packet. On a long or congested link a retransmission comes one
// retransmission timeout later (seconds, with a deep router queue), and a
// peer that sent everything looks stalled meanwhile.
#include <chrono>

namespace weir {

/// Three times the longer of the kernel's retransmission timeout and
/// receive round trip of the TCP socket `fd`; zero for any other socket, or
/// when the kernel does not say.
std::chrono::nanoseconds tcp_loss_recovery_time(int fd);

}  // namespace weir
