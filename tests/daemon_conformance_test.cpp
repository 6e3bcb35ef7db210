// Every conformance frame sent to the running daemon, one connection each:
// the reply (or silence) and whether the connection was closed must be what
// the protocol names.
#include <catch2/catch.hpp>

#include "wire/batch.hpp"
#include "wire/frame.hpp"
#include "support/daemon_process.hpp"
#include "support/test_paths.hpp"
#include "support/vectors.hpp"
#include "support/wire_peer.hpp"

using namespace weir;
using namespace weir::test;
namespace w = weir::wire;

namespace {

/// What the daemon must do with one frame sent on a fresh connection.
struct expectation {
  enum kind { push_reply, health_reply, nack_and_close, silent_close, reply_then_silent_close } what;
  std::uint8_t nack = 0;
};

expectation expect_for_frame_verdict(const std::string& verdict) {
  if (verdict == "TruncatedFrame") return {expectation::silent_close};
  if (verdict == "TrailingBytes") return {expectation::reply_then_silent_close};
  static const std::map<std::string, std::uint8_t> nacks{
      {"BadMagic", 0x01},           {"VersionMismatch", 0x02},   {"HeaderCrcMismatch", 0x03},
      {"PayloadTooLarge", 0x04},    {"PayloadCrcMismatch", 0x05}, {"EmptyPayload", 0x07},
      {"UnknownMessageType", 0x08}, {"UnknownDurability", 0x08}, {"ReservedFlagsSet", 0x09}};
  return {expectation::nack_and_close, nacks.at(verdict)};
}

expectation expect_for_ok_frame(const std::vector<std::uint8_t>& bytes) {
  const auto type = static_cast<w::message_type>(bytes.at(5));
  if (type == w::message_type::health_check) return {expectation::health_reply};
  if (w::is_push(type)) return {expectation::push_reply};
  return {expectation::nack_and_close, 0x08};  // a daemon-to-client type
}

expectation expect_for_body_verdict(const std::string& verdict) {
  if (verdict == "ok") return {expectation::push_reply};
  if (verdict == "EmptyRecord") return {expectation::nack_and_close, 0x07};
  if (verdict == "TooManyRecords" || verdict == "RecordTooLarge") return {expectation::nack_and_close, 0x04};
  return {expectation::nack_and_close, 0x0B};
}

/// A push may be acked, or refused transiently (InternalError keeps it open).
bool is_push_reply(const std::vector<std::uint8_t>& f, w::message_type sent) {
  const auto t = static_cast<w::message_type>(reply_type(f));
  if (t == w::message_type::nack) return nack_reason(f) == 0x06;
  if (sent == w::message_type::push) return t == w::message_type::ack;
  if (sent == w::message_type::push_tracked) return t == w::message_type::ack_tracked;
  return t == w::message_type::ack_batch;
}

void check_live(const std::string& socket, const std::string& name, const std::vector<std::uint8_t>& bytes,
                expectation e) {
  INFO("vector " << name);
  wire_peer peer(socket);
  REQUIRE(peer.connected());
  peer.send(bytes);
  switch (e.what) {
    case expectation::push_reply:
    case expectation::health_reply: {
      auto out = peer.collect_frames(1);
      REQUIRE(out.replies.size() == 1);
      if (e.what == expectation::health_reply)
        CHECK(reply_type(out.replies[0]) == 0x05);
      else
        CHECK(is_push_reply(out.replies[0], static_cast<w::message_type>(bytes.at(5))));
      // The connection is still usable.
      peer.send(w::encode_frame(w::message_type::health_check, w::durability::durable, {}));
      auto again = peer.collect_frames(1);
      REQUIRE(again.replies.size() == 1);
      CHECK(reply_type(again.replies[0]) == 0x05);
      break;
    }
    case expectation::nack_and_close: {
      auto out = peer.collect();
      REQUIRE(out.replies.size() == 1);
      CHECK(reply_type(out.replies[0]) == 0x03);
      CHECK(int(nack_reason(out.replies[0])) == int(e.nack));
      CHECK(out.closed);
      break;
    }
    case expectation::silent_close:
    case expectation::reply_then_silent_close: {
      peer.half_close();  // the rest of the frame never comes
      auto out = peer.collect();
      CHECK(out.replies.size() == (e.what == expectation::silent_close ? 0u : 1u));
      // Whatever was answered is an ordinary reply, never a protocol Nack.
      for (auto& r : out.replies) CHECK((reply_type(r) != 0x03 || nack_reason(r) == 0x06));
      CHECK(out.closed);
      break;
    }
  }
}

std::vector<std::uint8_t> as_push_batch(const std::vector<std::uint8_t>& body) {
  return w::encode_frame(w::message_type::push_batch, w::durability::durable, body);
}

/// A daemon reading its sockets one way or the other (runtime.read_batching:
/// `off` is Asio's reactor, `always` the epoll set many producers get).
struct live_daemon {
  temp_dir dir;
  daemon_process daemon;
  explicit live_daemon(const std::string& reads)
      : daemon(dir.path(), {"--set", "runtime.read_batching=" + reads}) {
    REQUIRE(daemon.wait_ready());
  }
  ~live_daemon() { CHECK(daemon.stop() == 0); }
};

}  // namespace

TEST_CASE("live daemon: every reference conformance frame", "[live][conformance]") {
  auto dir = reference_conformance_dir();
  if (!dir && in_ci()) FAIL("reference conformance vectors not found, and in CI they are always there");
  if (!dir) {
    WARN("SKIPPED: reference conformance vectors not found; nothing was checked");
    return;
  }
  const std::string reads = GENERATE(as<std::string>{}, "off", "always");
  INFO("runtime.read_batching " << reads);
  live_daemon d(reads);
  const auto sock = d.daemon.socket_path();
  int checked = 0;
  auto run_frames = [&](const nlohmann::json& list) {
    for (const auto& v : list) {
      const auto bytes = from_hex(v["hex"]);
      const std::string verdict = v["decode"];
      check_live(sock, v["name"], bytes, verdict == "ok" ? expect_for_ok_frame(bytes) : expect_for_frame_verdict(verdict));
      ++checked;
    }
  };
  run_frames(load_json(*dir / "wire_v1_vectors.json")["vectors"]);
  run_frames(load_json(*dir / "wire_v1_tracked_vectors.json")["frame_vectors"]);
  const auto batch = load_json(*dir / "wire_v1_batch_vectors.json");
  run_frames(batch["frame_vectors"]);
  for (const auto& v : batch["body_vectors"]) {
    check_live(sock, v["name"], as_push_batch(from_hex(v["hex"])), expect_for_body_verdict(v["decode"]));
    ++checked;
  }
  CHECK(checked == 30 + 3 + 4 + 11);
  // Garbage on all those connections left the daemon serving.
  CHECK(d.daemon.running());
}

TEST_CASE("live daemon: every own frame vector", "[live][conformance]") {
  const std::string reads = GENERATE(as<std::string>{}, "off", "always");
  INFO("runtime.read_batching " << reads);
  live_daemon d(reads);
  std::size_t checked = 0, expected = own_vectors()["frames"].size();
  for (const auto& v : own_vectors()["frames"]) {
    ++checked;
    const auto bytes = from_hex(v["hex"]);
    const std::string verdict = v["verdict"];
    expectation e;
    if (v["reply"].is_string()) {
      e.what = v["reply"] == "health" ? expectation::health_reply : expectation::push_reply;
      if (verdict == "TrailingBytes") e.what = expectation::reply_then_silent_close;
    } else if (v["reply"].is_null()) {
      e.what = expectation::silent_close;
    } else {
      e = {expectation::nack_and_close, v["reply"].get<std::uint8_t>()};
    }
    check_live(d.daemon.socket_path(), v["name"], bytes, e);
  }
  for (const auto& v : own_vectors()["batch_bodies"]) {
    if (v.contains("max_records")) continue;  // depends on a non-default limit
    check_live(d.daemon.socket_path(), v["name"], as_push_batch(from_hex(v["hex"])),
               expect_for_body_verdict(v["verdict"]));
    ++checked;
    ++expected;
  }
  CHECK(expected >= 30);  // the vector file was read whole
  CHECK(checked == expected);
}
