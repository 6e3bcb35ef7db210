// runtime.read_batching: the level-triggered epoll set that tells Unix-socket
// sessions when they have bytes, the count that decides when sessions use
// it, and the daemon switching to it under many producers and back.
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "transport/read_poller.hpp"
#include "support/daemon_process.hpp"
#include "support/http_get.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "weir/client.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// Counts the poller's calls; reads what is there unless told to leave it.
struct counting_target : readable_target {
  int fd = -1;
  bool drain = true;
  int calls = 0;
  boost::asio::io_context* io = nullptr;
  void on_readable() override {
    ++calls;
    char buf[64];
    if (drain) (void)!::read(fd, buf, sizeof buf);
    io->stop();  // one call per run of the loop
  }
};

struct socket_pair {
  int fds[2] = {-1, -1};
  socket_pair() { REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0); }
  ~socket_pair() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  void send(const char* s) { REQUIRE(::write(fds[1], s, 1) == 1); }
};

/// Runs the loop until a target stops it (or `limit` passes).
void run(boost::asio::io_context& io, std::chrono::milliseconds limit = 10s) {
  io.restart();
  io.run_for(limit);
}

}  // namespace

TEST_CASE("read batching: more than 8 connections reading switch to the set and 4 or fewer back", "[read_batching]") {
  CHECK_FALSE(read_poller::next_batching(false, 0));
  CHECK_FALSE(read_poller::next_batching(false, 8));
  CHECK(read_poller::next_batching(false, 9));
  CHECK(read_poller::next_batching(true, 5));        // in between: as it was
  CHECK_FALSE(read_poller::next_batching(false, 5));
  CHECK_FALSE(read_poller::next_batching(true, 4));
  CHECK(read_poller::next_batching(true, 64));
}

TEST_CASE("read batching: a watched socket is told while it has bytes and not once unwatched", "[read_batching]") {
  boost::asio::io_context io;
  read_poller poller(io, true);
  CHECK(poller.batching());
  poller.start();
  socket_pair sp;
  auto target = std::make_shared<counting_target>();
  target->fd = sp.fds[0];
  target->io = &io;
  REQUIRE(poller.watch(sp.fds[0], target));

  sp.send("a");
  run(io);
  CHECK(target->calls == 1);

  // Level-triggered: bytes left unread are told again, and again.
  target->drain = false;
  sp.send("b");
  run(io);
  run(io);
  CHECK(target->calls == 3);
  CHECK(poller.stats().wakeups.load() >= 3);
  CHECK(poller.stats().ready.load() >= 3);

  // Unwatched: the unread byte is not told any more.
  poller.unwatch(sp.fds[0]);
  run(io, 300ms);
  CHECK(target->calls == 3);

  // A target that is gone is passed over.
  REQUIRE(poller.watch(sp.fds[0], target));
  std::weak_ptr<counting_target> gone = target;
  target.reset();
  CHECK(gone.expired());
  run(io, 300ms);  // a call would reach freed memory (and AddressSanitizer)
  poller.unwatch(sp.fds[0]);
  poller.stop();
}

TEST_CASE("read batching: adaptive moves the reads to the set under many producers and back when they stop",
          "[live][read_batching]") {
  temp_dir dir;
  const std::uint16_t port = free_tcp_port();
  daemon_process d(dir.path(), {"--set", "admin.listen=127.0.0.1:" + std::to_string(port)});
  REQUIRE(d.wait_ready());
  auto series = [&](const std::string& name) { return scrape_series(http_request(port, "/metrics").body, name); };
  CHECK(series("weir_read_batching") == 0);

  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> sent{0}, acked{0};
  std::vector<std::thread> producers;
  for (int i = 0; i < 12; ++i)
    producers.emplace_back([&, i] {
      auto c = client::connection::connect_unix(d.socket_path());
      const std::string payload = "batching " + std::to_string(i);
      while (!stop.load()) {
        ++sent;
        if (c.push(as_bytes(payload), client::durability::buffered).acked) ++acked;
      }
    });
  const bool to_set = eventually([&] { return series("weir_read_batching") == 1; });
  // Reads go on through the set: more pushes are answered after the switch.
  const auto acked_at_switch = acked.load();
  const bool served = eventually([&] { return acked.load() > acked_at_switch + 1000; });
  stop = true;
  for (auto& t : producers) t.join();
  CHECK(to_set);
  CHECK(served);
  CHECK(acked.load() == sent.load());  // every push answered with an ack

  // Quiet: back to Asio's reactor, and a lone producer is served there.
  CHECK(eventually([&] { return series("weir_read_batching") == 0; }));
  auto c = client::connection::connect_unix(d.socket_path());
  CHECK(c.push(as_bytes(std::string("after")), client::durability::durable).acked);
  const std::string scrape = http_request(port, "/metrics").body;
  CHECK(scrape_series(scrape, "weir_read_batching_switches_total{to=\"set\"}") >= 1);
  CHECK(scrape_series(scrape, "weir_read_batching_switches_total{to=\"reactor\"}") >= 1);
  CHECK(scrape_series(scrape, "weir_read_batching_ready_sockets_total") >= 1000);
  CHECK(http_request(port, "/api/v1/status").body.find("\"read_batching\"") != std::string::npos);
  CHECK(d.stop() == 0);

  // off: Asio's reactor only, and no series.
  temp_dir off_dir;
  const std::uint16_t off_port = free_tcp_port();
  daemon_process off(off_dir.path(), {"--set", "admin.listen=127.0.0.1:" + std::to_string(off_port), "--set",
                                      "runtime.read_batching=off"});
  REQUIRE(off.wait_ready());
  CHECK(scrape_series(http_request(off_port, "/metrics").body, "weir_read_batching") == -1);
  CHECK(off.stop() == 0);
}
