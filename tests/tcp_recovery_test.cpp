// The time a TCP connection may go quiet recovering a lost packet, read
// from the kernel for a real loopback connection; none for a Unix socket.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "transport/tcp_recovery.hpp"

using namespace std::chrono_literals;

TEST_CASE("a TCP connection's loss recovery time is three of its retransmission timeouts at least", "[socket]") {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(listener >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener, 1) == 0);
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  const int client = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  const int server = ::accept(listener, nullptr, nullptr);
  REQUIRE(server >= 0);
  // Linux's least retransmission timeout is 200 ms, its first one 1 s.
  const auto t = weir::tcp_loss_recovery_time(server);
  CHECK(t >= 600ms);
  CHECK(t <= 6s);
  for (int fd : {client, server, listener}) ::close(fd);
}

TEST_CASE("a Unix socket has no loss recovery time", "[socket]") {
  int pair[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
  CHECK(weir::tcp_loss_recovery_time(pair[0]) == 0ns);
  CHECK(weir::tcp_loss_recovery_time(-1) == 0ns);
  ::close(pair[0]);
  ::close(pair[1]);
}
