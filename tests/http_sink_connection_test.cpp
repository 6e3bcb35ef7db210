// The HTTP sink's connection as the kernel sees it: requests leave at once
// (TCP_NODELAY). Without it, a request written while an earlier one's
// segment waits for the endpoint's delayed ACK is held back up to 40 ms.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "config/loader.hpp"
#include "sinks/sink.hpp"
#include "support/http_test_server.hpp"
#include "support/local_sockets.hpp"

using namespace weir;
using namespace weir::test;

TEST_CASE("http sink: its kept-alive connection sends each request without waiting for ACKs (TCP_NODELAY)",
          "[sink][http]") {
  http_test_server server;
  config_sources src;
  src.file_required = false;
  src.overrides = {"sink.type=http", "sink.http.url=" + server.url()};
  auto sink = make_sink_factory(load_config(src))->make();

  sink_record r;
  r.id = std::string(64, 'a');
  r.segment = "shard_00/seg_00000001.wab";
  r.sequence = 1;
  r.index = 1;
  r.payload = {'h', 'i'};
  for (int commit = 0; commit < 3; ++commit) {
    std::vector<sink_record> window(2, r);
    window[1].index = 2;
    REQUIRE(sink->commit(window).kind == commit_result::outcome::committed);
  }
  REQUIRE(server.accepted().size() == 6);

  const auto fds = sockets_connected_to(server.port());
  REQUIRE(fds.size() == 1);  // the sink's connection, kept alive after the commit
  int no_delay = 0;
  socklen_t len = sizeof no_delay;
  REQUIRE(::getsockopt(fds.front(), IPPROTO_TCP, TCP_NODELAY, &no_delay, &len) == 0);
  CHECK(no_delay == 1);
  int quick_ack = 0;
  len = sizeof quick_ack;
  REQUIRE(::getsockopt(fds.front(), IPPROTO_TCP, TCP_QUICKACK, &quick_ack, &len) == 0);
  CHECK(quick_ack == 1);
}

TEST_CASE("http sink: its probe finds an endpoint gone and keeps finding it gone until it is back", "[sink][http]") {
  http_test_server server;
  config_sources src;
  src.file_required = false;
  src.overrides = {"sink.type=http", "sink.http.url=" + server.url()};
  auto sink = make_sink_factory(load_config(src))->make();
  std::string why;
  CHECK(sink->probe(why) == sink_health::healthy);  // connects, and keeps the connection
  CHECK(why.empty());

  server.stop();  // the kept-alive connection is closed by the endpoint, and nothing listens
  for (int look = 0; look < 3; ++look) {
    why.clear();
    CHECK(sink->probe(why) == sink_health::down);
    CHECK(why.find("connecting to") != std::string::npos);
  }
  server.start();
  why.clear();
  CHECK(sink->probe(why) == sink_health::healthy);
  CHECK(why.empty());
}
