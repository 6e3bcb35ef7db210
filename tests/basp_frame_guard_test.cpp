// What a cluster link passes on to CAF, judged byte by byte
// (transport/basp_frame_guard.hpp): frames are built here in CAF 0.17's BASP
// layout, and every case is also fed one byte at a time (a TLS record can
// end anywhere).
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "transport/basp_frame_guard.hpp"

using namespace weir;
using bytes = std::vector<std::uint8_t>;
using verdict = basp_frame_guard::verdict;

namespace {

constexpr std::uint64_t membership_id = 42;

void put_be(bytes& b, std::uint64_t v, int n) {
  for (int i = n - 1; i >= 0; --i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

void put_varbyte(bytes& b, std::uint64_t v) {
  do {
    std::uint8_t x = v & 0x7f;
    v >>= 7;
    b.push_back(static_cast<std::uint8_t>(x | (v ? 0x80 : 0)));
  } while (v);
}

bytes frame(std::uint8_t op, const bytes& payload, std::uint64_t dest = membership_id, std::uint8_t flags = 0) {
  bytes b{op, 0, 0, flags};
  put_be(b, payload.size(), 4);
  put_be(b, 7, 8);   // operation data
  put_be(b, 99, 8);  // source actor
  put_be(b, dest, 8);
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

bytes node_id(std::uint8_t seed) { return bytes(32, seed); }

/// A direct message's payload: no forwarding stack, then the type names and `elements`.
bytes message(const std::string& types, const bytes& elements) {
  bytes b{0, 0, 0};
  put_varbyte(b, types.size());
  b.insert(b.end(), types.begin(), types.end());
  b.insert(b.end(), elements.begin(), elements.end());
  return b;
}

struct run {
  verdict v = verdict::ok;
  bytes out;
  std::string why;
  std::uint64_t dropped = 0;
};

/// The stream fed at once and one byte at a time: both must agree.
run feed(const bytes& stream, bool peer_answers = false) {
  run whole, bytewise;
  for (run* r : {&whole, &bytewise}) {
    basp_frame_guard g(1 << 20, peer_answers, [](const basp_frame_guard::caf_node&) { return true; },
                       [](std::uint64_t actor) { return actor == membership_id; });
    if (r == &whole) {
      r->v = g.feed(stream.data(), stream.size(), r->out);
    } else {
      for (auto byte : stream)
        if ((r->v = g.feed(&byte, 1, r->out)) != verdict::ok) break;
    }
    r->why = g.why();
    r->dropped = g.dropped();
  }
  REQUIRE(whole.v == bytewise.v);
  if (whole.v == verdict::ok) REQUIRE(whole.out == bytewise.out);
  return whole;
}

/// Two client handshakes naming one node, as a caller's CAF sends them.
bytes handshakes() {
  auto b = frame(1, node_id(5));
  auto again = frame(1, node_id(5));
  b.insert(b.end(), again.begin(), again.end());
  return b;
}

bytes with(bytes a, const bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_CASE("basp guard: a heartbeat message of the protocol passes whole", "[cluster][guard]") {
  bytes hb;
  put_be(hb, 2, 2);  // from
  put_be(hb, 0xabc, 8);  // incarnation
  put_varbyte(hb, 1);
  hb.insert(hb.end(), 37, 1);  // one replica_position
  hb.push_back(1);             // held_known
  put_varbyte(hb, 0);
  const auto stream = with(handshakes(), frame(2, message("@<>+weir::peer_heartbeat", hb)));
  const auto r = feed(stream);
  CHECK(r.v == verdict::ok);
  CHECK(r.out == stream);
}

TEST_CASE("basp guard: a vector count past the frame is refused before CAF sizes a vector by it",
          "[cluster][guard]") {
  bytes chunk(44, 0);
  put_varbyte(chunk, 0xfffffff0);  // bytes: "4 GiB" in a 60-byte frame
  chunk.insert(chunk.end(), {0, 0});
  const auto r = feed(with(handshakes(), frame(2, message("@<>+weir::replica_chunk", chunk))));
  CHECK(r.v == verdict::forbidden);
  CHECK(r.why.find("does not hold") != std::string::npos);
  bytes hb;
  put_be(hb, 2, 2);
  put_be(hb, 1, 8);
  put_varbyte(hb, 100000000);  // replica_positions
  CHECK(feed(with(handshakes(), frame(2, message("@<>+weir::peer_heartbeat", hb)))).v == verdict::forbidden);
}

TEST_CASE("basp guard: only the protocol's messages to the actors peers reach pass", "[cluster][guard]") {
  // An exit message (it would kill the actor) and a local one.
  CHECK(feed(with(handshakes(), frame(2, message("@<>+@exit", bytes(20, 0))))).v == verdict::forbidden);
  bytes confirmed;
  put_be(confirmed, 0, 8);
  put_be(confirmed, 1ull << 63, 8);
  const auto r = feed(with(handshakes(), frame(2, message("@<>+@atom+@u64", confirmed))));
  CHECK(r.v == verdict::forbidden);
  CHECK(r.why.find("a message of type @<>+@atom+@u64") != std::string::npos);
  // A trim to an actor peers do not reach (the replica store).
  const auto store = feed(with(handshakes(), frame(2, message("@<>+weir::replica_trim", bytes(20, 0)), 77)));
  CHECK(store.v == verdict::forbidden);
  CHECK(store.why.find("actor 77") != std::string::npos);
  // A message with a forwarding stack, and one cut short.
  bytes stacked = message("@<>+weir::replica_trim", bytes(20, 0));
  stacked[0] = 1;
  CHECK(feed(with(handshakes(), frame(2, stacked))).v == verdict::forbidden);
  CHECK(feed(with(handshakes(), frame(2, message("@<>+weir::replica_trim", bytes(3, 0))))).v == verdict::forbidden);
  // An error answer with no context passes; one with a context does not.
  bytes error(9, 0);
  CHECK(feed(with(handshakes(), frame(2, message("@<>+@error", with(error, {0, 0, 3, '@', '<', '>'}))))).v ==
        verdict::ok);
  CHECK(feed(with(handshakes(), frame(2, message("@<>+@error", with(error, {0, 0, 5, '@', '<', '>', '+', 'x'}))))).v ==
        verdict::forbidden);
}

TEST_CASE("basp guard: a message to an actor by name is dropped and the link goes on", "[cluster][guard]") {
  const auto spawn_query = frame(2, message("@<>+@atom+@atom+@str", bytes(21, 0)), 12345, 0x01);
  const auto trim = frame(2, message("@<>+weir::replica_trim", bytes(20, 0)));
  const auto r = feed(with(with(handshakes(), spawn_query), trim));
  CHECK(r.v == verdict::ok);
  CHECK(r.dropped == 1);
  CHECK(r.out == with(handshakes(), trim));
}

TEST_CASE("basp guard: handshakes and notices speak only for the link's own node", "[cluster][guard]") {
  // A down notice naming another node (it would end that node's proxies here).
  CHECK(feed(with(handshakes(), frame(5, with(node_id(6), bytes(40, 0))))).v == verdict::forbidden);
  CHECK(feed(with(handshakes(), frame(5, with(node_id(5), bytes(40, 0))))).v == verdict::ok);
  // A second handshake naming another node, a routed message, a handshake late.
  CHECK(feed(with(frame(1, node_id(5)), frame(1, node_id(6)))).v == verdict::forbidden);
  CHECK(feed(with(handshakes(), frame(3, bytes(64, 0)))).v == verdict::forbidden);
  CHECK(feed(with(handshakes(), frame(1, node_id(5)))).v == verdict::forbidden);
  // The side that called expects the server's handshake first.
  CHECK(feed(frame(1, node_id(5)), true).v == verdict::forbidden);
  CHECK(feed(frame(0, node_id(5)), true).v == verdict::ok);
  // Too large a payload.
  CHECK(feed(with(handshakes(), frame(6, bytes((1 << 20) + 1, 0)))).v == verdict::too_large);
}

TEST_CASE("basp guard: a count CAF would read as another number is refused", "[cluster][guard]") {
  // 80 80 80 80 80 80 80 80 40: zero here if read for 5 bytes, 2^30 to CAF.
  bytes chunk(44, 0);
  chunk.insert(chunk.end(), {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40});
  chunk.insert(chunk.end(), {0, 0});
  CHECK(feed(with(handshakes(), frame(2, message("@<>+weir::replica_chunk", chunk)))).v == verdict::forbidden);
  // Five bytes whose value needs more than 32 bits.
  bytes wide(44, 0);
  wide.insert(wide.end(), {0x80, 0x80, 0x80, 0x80, 0x40});
  wide.insert(wide.end(), {0, 0});
  CHECK(feed(with(handshakes(), frame(2, message("@<>+weir::replica_chunk", wide)))).v == verdict::forbidden);
  // A count spelt in more bytes than it needs, but within 32 bits, reads the same in both.
  bytes padded(44, 0);
  padded.insert(padded.end(), {0x81, 0x00});  // 1
  padded.insert(padded.end(), {7, 0, 0});     // the byte, sealed, skips
  CHECK(feed(with(handshakes(), frame(2, message("@<>+weir::replica_chunk", padded)))).v == verdict::ok);
  // Bytes after a message's last field.
  CHECK(feed(with(handshakes(), frame(2, message("@<>+weir::replica_trim", bytes(21, 0))))).v == verdict::forbidden);
}
