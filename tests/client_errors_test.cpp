// libweir-client's errors: every Nack reason by name and the unknown ones
// raw; a refused frame a result, not an exception; timeouts (connect,
// handshake, reply, send), a daemon gone mid-connection and a poisoned
// connection each a client_error of their own kind, retryable exactly when
// the outcome is unknown; and replies a fake daemon crafts (a length past
// its type's cap, garbage, an unknown or wrong type, stray bytes) refused as
// protocol errors that poison the connection.
#include <signal.h>

#include <chrono>
#include <string>
#include <optional>
#include <utility>

#include <catch2/catch.hpp>

#include "wire/bytes.hpp"
#include "wire/frame.hpp"
#include "support/daemon_process.hpp"
#include "support/fake_daemon.hpp"
#include "support/test_pki.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "weir/client.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// A reply frame as a daemon encodes it (its CRCs right), of any type.
std::vector<std::uint8_t> reply_frame(wire::message_type type, std::vector<std::uint8_t> payload = {}) {
  return wire::encode_frame(type, wire::durability::durable, payload);
}

/// `frame` with its type byte and declared payload length replaced, and the
/// header CRC made to match: only what was replaced is wrong.
std::vector<std::uint8_t> with_header(std::vector<std::uint8_t> frame, std::uint8_t type, std::uint32_t declared) {
  frame[5] = type;
  store_le32(frame.data() + 8, declared);
  store_le32(frame.data() + 12, crc32_of(byte_span(frame.data(), 12)));
  return frame;
}

std::vector<std::uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

/// The client_error `call` raised; nullopt when it raised none.
template <class Call>
std::optional<client::client_error> error_of(Call call) {
  try {
    call();
  } catch (const client::client_error& e) {
    return e;
  }
  return std::nullopt;
}

struct two_pushes {
  std::optional<client::client_error> first, next;
  std::size_t frames_read = 0;  // by the fake daemon
};

/// Two pushes on one connection to a fake daemon that answers the first
/// with `reply` (and then nothing).
two_pushes push_twice_against(const std::filesystem::path& dir, std::vector<std::uint8_t> reply) {
  scripted_daemon fake((dir / "fake.sock").string(), {std::move(reply)});
  two_pushes out;
  {
    auto c = client::connection::connect_unix(fake.path());
    // Bounded, so that a client reading on where it should have stopped
    // shows as a timeout instead of a hang.
    c.set_timeout(5s);
    out.first = error_of([&] { c.push(as_bytes("one"), client::durability::durable); });
    out.next = error_of([&] { c.push(as_bytes("two"), client::durability::durable); });
  }
  out.frames_read = fake.frames_read_until_closed();
  return out;
}

bool mentions(const std::exception& e, const std::string& text) {
  return std::string(e.what()).find(text) != std::string::npos;
}

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

  // Far more than a socket buffer: the daemon refuses it from its header
  // and closes while the client is still sending.
  const auto huge = again.push(as_bytes(std::string(8 << 20, 'x')), client::durability::durable);
  CHECK_FALSE(huge.acked);
  REQUIRE(huge.reason());
  CHECK(*huge.reason() == client::nack_reason::payload_too_large);
  const auto after = error_of([&] { again.push(as_bytes("more"), client::durability::durable); });
  REQUIRE(after);
  CHECK(after->kind() == client::error_kind::connection_lost);
  CHECK(after->retryable());
  CHECK(d.stop() == 0);
}

TEST_CASE("client: a reply that does not come is a timeout and poisons the connection", "[client]") {
  temp_dir dir;
  silent_unix_listener hung((dir / "silent.sock").string());
  auto c = client::connection::connect_unix(hung.path());
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
  silent_unix_listener hung((dir / "silent.sock").string());
  auto c = client::connection::connect_unix(hung.path());
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

TEST_CASE("client: connect_unix gives up within its timeout on a daemon whose backlog stays full", "[client]") {
  temp_dir dir;
  silent_unix_listener stuck((dir / "stuck.sock").string());
  client::connection::connect_unix(stuck.path(), 300ms);  // room in the backlog: connected
  stuck.fill_backlog();
  const auto started = std::chrono::steady_clock::now();
  const auto e = error_of([&] { client::connection::connect_unix(stuck.path(), 300ms); });
  const auto took = std::chrono::steady_clock::now() - started;
  REQUIRE(e);
  INFO(e->what());
  CHECK(e->kind() == client::error_kind::unreachable);  // nothing was sent
  CHECK_FALSE(e->retryable());
  CHECK(mentions(*e, "within the connect timeout"));
  CHECK(took >= 250ms);
  CHECK(took < 5s);
}

TEST_CASE("client: a TLS handshake nobody answers is a timeout within connect_tcp's bound", "[client][tls]") {
  temp_dir dir;
  test_pki pki(dir / "pki");
  pki.make_ca("ca");
  silent_tcp_listener mute;  // the TCP connect succeeds; the ClientHello goes unanswered
  const auto started = std::chrono::steady_clock::now();
  const auto e = error_of([&] {
    client::connection::connect_tcp("127.0.0.1", mute.port(), {pki.pem("ca"), "", "", ""}, 300ms);
  });
  const auto took = std::chrono::steady_clock::now() - started;
  REQUIRE(e);
  INFO(e->what());
  CHECK(e->kind() == client::error_kind::timeout);
  CHECK(mentions(*e, "no handshake within the connect timeout"));
  CHECK(took >= 250ms);
  CHECK(took < 5s);
}

TEST_CASE("client: a reply declaring more than its type carries is refused before its payload is read", "[client]") {
  temp_dir dir;
  // An Ack carries nothing; this one declares 1 MiB (under the protocol's
  // 16 MiB cap) and sends none of it: a client that allocated and read it
  // would wait out its timeout instead.
  const auto big_ack = with_header(reply_frame(wire::message_type::ack),
                                   static_cast<std::uint8_t>(wire::message_type::ack), 1u << 20);
  auto r = push_twice_against(dir.path(), big_ack);
  REQUIRE(r.first);
  INFO(r.first->what());
  CHECK(r.first->kind() == client::error_kind::protocol);
  CHECK(mentions(*r.first, "reply payload larger than its type allows"));
  // Past the protocol's cap the header itself is refused.
  r = push_twice_against(dir.path(), with_header(reply_frame(wire::message_type::ack),
                                                 static_cast<std::uint8_t>(wire::message_type::ack), 0xffffffffu));
  REQUIRE(r.first);
  CHECK(r.first->kind() == client::error_kind::protocol);
  CHECK(mentions(*r.first, "bad reply header: PayloadTooLarge"));
}

TEST_CASE("client: garbage or an unknown message type in place of a reply is a protocol error", "[client]") {
  temp_dir dir;
  auto r = push_twice_against(dir.path(), bytes_of("HTTP/1.1 400 Bad Request\r\n\r\n"));
  REQUIRE(r.first);
  CHECK(r.first->kind() == client::error_kind::protocol);
  CHECK_FALSE(r.first->retryable());
  CHECK(mentions(*r.first, "bad reply header: BadMagic"));
  r = push_twice_against(dir.path(), with_header(reply_frame(wire::message_type::ack), 0x42, 0));
  REQUIRE(r.first);
  CHECK(r.first->kind() == client::error_kind::protocol);
  CHECK(mentions(*r.first, "bad reply header: UnknownMessageType"));
}

TEST_CASE("client: a reply of the wrong type poisons the connection and the next call names that first error",
          "[client]") {
  temp_dir dir;
  // A well-formed HealthCheckResponse, in answer to a Push.
  const auto r = push_twice_against(dir.path(), reply_frame(wire::message_type::health_check_response));
  REQUIRE(r.first);
  CHECK(r.first->kind() == client::error_kind::protocol);
  CHECK(mentions(*r.first, "unexpected reply type 5"));
  REQUIRE(r.next);
  CHECK(r.next->kind() == client::error_kind::poisoned);
  CHECK_FALSE(r.next->retryable());
  CHECK(mentions(*r.next, "poisoned by an earlier error (unexpected reply type 5)"));
  CHECK(r.frames_read == 1);  // the poisoned connection sent nothing more
}

TEST_CASE("client: bytes after a reply desync the connection and the next reply poisons it", "[client]") {
  temp_dir dir;
  // An Ack with stray bytes behind it: the first push is acked, the second
  // reads the stray bytes as its reply's header.
  auto ack_and_stray = reply_frame(wire::message_type::ack);
  const auto stray = bytes_of("garbage-after-the-ack");
  ack_and_stray.insert(ack_and_stray.end(), stray.begin(), stray.end());
  scripted_daemon fake((dir / "fake.sock").string(), {ack_and_stray});
  auto c = client::connection::connect_unix(fake.path());
  c.set_timeout(5s);
  CHECK(c.push(as_bytes("one"), client::durability::durable).acked);
  const auto desynced = error_of([&] { c.push(as_bytes("two"), client::durability::durable); });
  REQUIRE(desynced);
  CHECK(desynced->kind() == client::error_kind::protocol);
  CHECK(mentions(*desynced, "bad reply header: BadMagic"));
  const auto after = error_of([&] { c.health_check(); });
  REQUIRE(after);
  CHECK(after->kind() == client::error_kind::poisoned);
  CHECK(mentions(*after, "bad reply header: BadMagic"));
}

TEST_CASE("client: a pipelined producer whose daemon closes mid-send reads the replies that came and loses only the rest",
          "[client]") {
  temp_dir dir;
  // Two frames answered, then the daemon closes while the third is being sent.
  scripted_daemon fake((dir / "fake.sock").string(),
                       {reply_frame(wire::message_type::ack), reply_frame(wire::message_type::ack)}, 2);
  auto c = client::connection::connect_unix(fake.path());
  c.set_timeout(5s);
  std::size_t acked = 0;
  std::optional<client::client_error> lost;
  {
    client::pipelined_producer p(c, 8);
    auto count = [&](const client::push_result& r) { acked += r.acked ? 1 : 0; };
    p.push(as_bytes("one"), client::durability::durable, count);
    p.push(as_bytes("two"), client::durability::durable, count);
    REQUIRE(eventually([&] { return fake.frames_read() == 2; }));
    lost = error_of([&] {
      p.push(as_bytes(std::string(8 << 20, 'x')), client::durability::durable, count);  // more than a socket buffer
      p.flush();
    });
  }
  CHECK(acked == 2);
  REQUIRE(lost);
  CHECK(lost->kind() == client::error_kind::connection_lost);
  CHECK(lost->retryable());
}
