// libweir-client's errors: every Nack reason by name and the unknown ones
// raw; a refused frame a result, not an exception; timeouts, a daemon gone
// mid-connection and a poisoned connection each a client_error of their own
// kind, retryable exactly when the outcome is unknown.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include <catch2/catch.hpp>

#include "support/daemon_process.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "weir/client.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// A Unix socket that accepts connections (the kernel's backlog does) and
/// never reads or answers: a daemon that hangs.
struct silent_listener {
  std::string path;
  int fd = -1;
  explicit silent_listener(const std::filesystem::path& dir) : path((dir / "silent.sock").string()) {
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd, 8) == 0);
  }
  ~silent_listener() { ::close(fd); }
};

}  // namespace

TEST_CASE("client: every Nack reason has its wire name and an unknown byte stays raw", "[client]") {
  const std::vector<std::pair<std::uint8_t, const char*>> known{
      {0x01, "BadMagic"},      {0x02, "VersionMismatch"}, {0x03, "BadHeaderCrc"},     {0x04, "PayloadTooLarge"},
      {0x05, "BadPayloadCrc"}, {0x06, "InternalError"},   {0x07, "EmptyPayload"},     {0x08, "UnknownMessage"},
      {0x09, "ReservedFlagsSet"}, {0x0b, "BadBatchFraming"}};
  int checked = 0;
  for (const auto& [byte, name] : known) {
    CHECK(client::nack_name(byte) == name);
    REQUIRE(client::known_nack(byte));
    CHECK(static_cast<std::uint8_t>(*client::known_nack(byte)) == byte);
    client::push_result r{false, byte};
    CHECK(r.retryable() == (byte == 0x06));
    ++checked;
  }
  CHECK(checked == 10);
  CHECK(client::nack_name(0x0a) == "Unknown(0x0a)");
  CHECK_FALSE(client::known_nack(0x0a));
  CHECK_FALSE(client::known_nack(0x00));
  CHECK(client::nack_name(0xff) == "Unknown(0xff)");
  CHECK_FALSE((client::push_result{false, 0x0a}.reason()));
  CHECK_FALSE((client::push_result{true, 0}.reason()));
}

TEST_CASE("client: a refused push is a typed result and not an exception", "[live][client]") {
  temp_dir dir;
  daemon_process d(dir.path(), {"--set", "limits.max_payload_bytes=1024", "--set", "sink.type=noop"});
  REQUIRE(d.wait_ready());
  auto c = client::connection::connect_unix(d.socket_path());
  c.set_timeout(10s);
  const auto big = c.push(as_bytes(std::string(2048, 'x')), client::durability::durable);
  CHECK_FALSE(big.acked);
  REQUIRE(big.reason());
  CHECK(*big.reason() == client::nack_reason::payload_too_large);
  CHECK_FALSE(big.retryable());
  // Every Nack but InternalError closes the connection (wire protocol): the
  // next call says so, and a new connection is served.
  CHECK(c.closed_by_peer(5s));
  auto again = client::connection::connect_unix(d.socket_path());
  CHECK(again.push(as_bytes("small"), client::durability::durable).acked);
  CHECK(d.stop() == 0);
}

TEST_CASE("client: a reply that does not come is a timeout and poisons the connection", "[client]") {
  temp_dir dir;
  silent_listener hung(dir.path());
  auto c = client::connection::connect_unix(hung.path);
  c.set_timeout(200ms);
  try {
    c.health_check();
    FAIL("a silent daemon answered");
  } catch (const client::client_error& e) {
    CHECK(e.kind() == client::error_kind::timeout);
    CHECK(e.retryable());
    CHECK(std::string(e.what()).find("no reply within the timeout") != std::string::npos);
  }
  try {
    c.push(as_bytes("after"), client::durability::durable);
    FAIL("a poisoned connection sent");
  } catch (const client::client_error& e) {
    CHECK(e.kind() == client::error_kind::poisoned);
    CHECK_FALSE(e.retryable());
    CHECK(std::string(e.what()).find("no reply within the timeout") != std::string::npos);  // the first error
  }
}

TEST_CASE("client: a frame the daemon does not take in is a send timeout", "[client]") {
  temp_dir dir;
  silent_listener hung(dir.path());
  auto c = client::connection::connect_unix(hung.path);
  c.set_timeout(200ms);
  const std::string big(8 << 20, 'b');  // far more than a socket buffer holds
  try {
    c.push(as_bytes(big), client::durability::durable);
    FAIL("8 MiB went into a socket nobody reads");
  } catch (const client::client_error& e) {
    CHECK(e.kind() == client::error_kind::timeout);
    CHECK(e.retryable());
    CHECK(std::string(e.what()).find("send timed out") != std::string::npos);
  }
}

TEST_CASE("client: a daemon killed under a connection is connection_lost and retryable", "[live][client]") {
  temp_dir dir;
  daemon_process d(dir.path(), {"--set", "sink.type=noop"});
  REQUIRE(d.wait_ready());
  auto c = client::connection::connect_unix(d.socket_path());
  c.set_timeout(10s);
  REQUIRE(c.push(as_bytes("before"), client::durability::durable).acked);
  ::kill(d.pid(), SIGKILL);
  REQUIRE(d.wait_exit() != 0);
  try {
    // The first send may still land in the socket buffer: the read fails.
    c.push(as_bytes("after"), client::durability::durable);
    FAIL("a killed daemon acked");
  } catch (const client::client_error& e) {
    CHECK(e.kind() == client::error_kind::connection_lost);
    CHECK(e.retryable());
  }
  try {
    client::connection::connect_unix(d.socket_path());
    FAIL("connected to a killed daemon");
  } catch (const client::client_error& e) {
    CHECK(e.kind() == client::error_kind::unreachable);
    CHECK_FALSE(e.retryable());
  }
}
