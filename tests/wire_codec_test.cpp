// The codec against weir's own vectors (tests/vectors/wire_vectors.json) and
// a few encode round trips.
#include <openssl/evp.h>
#include <zlib.h>

#include <random>

#include <catch2/catch.hpp>

#include "wire/batch.hpp"
#include "wire/coordinate.hpp"
#include "wire/frame.hpp"
#include "support/vectors.hpp"

using namespace weir;
using namespace weir::wire;
using weir::test::from_hex;
using weir::test::own_vectors;

namespace {

std::string verdict_of(const outcome<frame_view, frame_error>& r) {
  return r ? "ok" : std::string(name_of(r.error()));
}

}  // namespace

TEST_CASE("own frame vectors decode to their verdicts", "[wire]") {
  std::size_t checked = 0;
  for (const auto& v : own_vectors()["frames"]) {
    INFO(v["name"].get<std::string>() << ": " << v["about"].get<std::string>());
    const auto bytes = from_hex(v["hex"]);
    CHECK(verdict_of(decode_frame(bytes)) == v["verdict"].get<std::string>());
    ++checked;
  }
  CHECK(checked == 30);
}

TEST_CASE("own batch body vectors decode to their verdicts", "[wire]") {
  std::size_t checked = 0;
  for (const auto& v : own_vectors()["batch_bodies"]) {
    INFO(v["name"].get<std::string>());
    const auto bytes = from_hex(v["hex"]);
    const auto max_records = v.value("max_records", 2048u);
    auto r = decode_batch_body(bytes, max_records, payload_hard_cap);
    CHECK((r ? std::string("ok") : std::string(name_of(r.error()))) == v["verdict"].get<std::string>());
    if (r && v.contains("records")) {
      REQUIRE(r.value().size() == v["records"].size());
      for (std::size_t i = 0; i < r.value().size(); ++i)
        CHECK(to_hex(r.value()[i]) == v["records"][i].get<std::string>());
    }
    ++checked;
  }
  CHECK(checked == 11);
}

TEST_CASE("own AckBatch vectors decode to their verdicts", "[wire]") {
  for (const auto& v : own_vectors()["ack_batches"]) {
    INFO(v["name"].get<std::string>());
    const auto bytes = from_hex(v["hex"]);
    auto r = decode_ack_batch(bytes, v["expected"].get<std::size_t>());
    CHECK((r ? std::string("ok") : std::string(name_of(r.error()))) == v["verdict"].get<std::string>());
    if (r) {
      CHECK(r.value() == v["accepted"].get<std::vector<bool>>());
      CHECK(encode_ack_batch_body(r.value()) == bytes);
    }
  }
}

TEST_CASE("own coordinate vectors decode to their verdicts", "[wire]") {
  for (const auto& v : own_vectors()["coordinates"]) {
    INFO(v["name"].get<std::string>());
    const auto bytes = from_hex(v["hex"]);
    auto r = decode_coordinate(bytes);
    CHECK((r ? std::string("ok") : std::string(name_of(r.error()))) == v["verdict"].get<std::string>());
    if (r) {
      CHECK(r.value().segment == v["segment"].get<std::string>());
      CHECK(r.value().index == v["index"].get<std::uint64_t>());
      CHECK(to_hex(r.value().id) == v["record_id_hex"].get<std::string>());
      const auto payload = from_hex(v["payload_hex"]);
      CHECK(compute_record_id(r.value().segment, r.value().index, payload) == r.value().id);
      CHECK(encode_coordinate(r.value()) == bytes);
    }
  }
}

TEST_CASE("a record id is the SHA-256 of the segment name and index and payload each with its length before it", "[wire]") {
  // Spelled out byte by byte and hashed in one piece, for names that fit a
  // coordinate and for one longer than any coordinate can carry.
  auto le64 = [](std::string& out, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  int checked = 0;
  for (std::size_t name_length : {0, 1, 25, 255, 256, 1000}) {
    const std::string segment(name_length, 's');
    const std::string payload = "payload of " + std::to_string(name_length);
    std::string layout;
    le64(layout, segment.size());
    layout += segment;
    le64(layout, 42);
    le64(layout, payload.size());
    layout += payload;
    record_id expected;
    unsigned int size = 0;
    REQUIRE(EVP_Digest(layout.data(), layout.size(), expected.data(), &size, EVP_sha256(), nullptr) == 1);
    REQUIRE(size == expected.size());
    const byte_span bytes(reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size());
    CHECK(compute_record_id(segment, 42, bytes) == expected);
    ++checked;
  }
  CHECK(checked == 6);
}

TEST_CASE("encoded frames decode back to the same header and payload", "[wire]") {
  const std::vector<std::uint8_t> payload{1, 2, 3, 0, 255};
  for (auto t : {message_type::push, message_type::push_tracked, message_type::health_check}) {
    for (auto d : {durability::durable, durability::batched, durability::buffered, durability::replicated}) {
      auto bytes = encode_frame(t, d, payload);
      auto r = decode_frame(bytes);
      REQUIRE(r);
      CHECK(r.value().header.type == t);
      CHECK(r.value().header.dur == d);
      CHECK(std::vector<std::uint8_t>(r.value().payload.begin(), r.value().payload.end()) == payload);
    }
  }
}

TEST_CASE("the retired 0x02 byte is a Durable promise", "[wire]") {
  CHECK(tier_of(durability::batched) == tier::durable);
  CHECK(tier_of(durability::durable) == tier::durable);
  CHECK(tier_of(durability::buffered) == tier::buffered);
  CHECK(tier_of(durability::replicated) == tier::replicated);
}

TEST_CASE("replies carry the filler durability and the exact reason bytes", "[wire]") {
  auto ack = decode_frame(encode_ack());
  REQUIRE(ack);
  CHECK(ack.value().header.dur == durability::durable);
  CHECK(ack.value().payload.empty());

  auto vm = encode_nack(nack_reason::version_mismatch);
  auto vm_frame = decode_frame(vm);
  REQUIRE(vm_frame);
  CHECK(to_hex(vm_frame.value().payload) == "0201");

  for (auto r : {nack_reason::bad_magic, nack_reason::internal_error, nack_reason::bad_batch_framing}) {
    auto f = encode_nack(r);
    auto d = decode_frame(f);
    REQUIRE(d);
    REQUIRE(d.value().payload.size() == 1);
    CHECK(d.value().payload[0] == static_cast<std::uint8_t>(r));
  }
}

TEST_CASE("a configured payload cap below the hard cap is enforced on the header", "[wire]") {
  auto bytes = encode_frame(message_type::push, durability::durable, std::vector<std::uint8_t>(100, 7));
  CHECK(decode_frame(bytes, 100));
  auto over = decode_frame(bytes, 99);
  REQUIRE_FALSE(over);
  CHECK(over.error() == frame_error::payload_too_large);
  // Only the header is needed to reject: the payload is never looked at.
  auto header_only = decode_header(byte_span(bytes).first(header_size), 99);
  REQUIRE_FALSE(header_only);
  CHECK(header_only.error() == frame_error::payload_too_large);
}

TEST_CASE("batch records are bounded by the per-record cap before the body is read", "[wire]") {
  std::vector<std::uint8_t> rec(10, 'x');
  auto body = encode_batch_body({rec, rec});
  CHECK(decode_batch_body(body, 1024, 10));
  auto r = decode_batch_body(body, 1024, 9);
  REQUIRE_FALSE(r);
  CHECK(r.error() == batch_error::record_too_large);
  CHECK(nack_for(batch_error::record_too_large) == nack_reason::payload_too_large);
  CHECK(nack_for(batch_error::empty_record) == nack_reason::empty_payload);
  CHECK(nack_for(batch_error::length_mismatch) == nack_reason::bad_batch_framing);
}

TEST_CASE("AckBatch bitmaps are LSB-first across bytes", "[wire]") {
  std::vector<bool> accepted(9, false);
  accepted[0] = accepted[2] = accepted[8] = true;
  CHECK(to_hex(encode_ack_batch_body(accepted)) == "0109000501");
}

TEST_CASE("crc32_of is the zlib CRC-32 for every length and seed on both sides of the table-walk threshold",
          "[wire][crc]") {
  const std::string check = "123456789";
  CHECK(weir::crc32_of(weir::byte_span(reinterpret_cast<const std::uint8_t*>(check.data()), check.size())) ==
        0xCBF43926u);
  std::mt19937 rng(7);
  std::vector<std::uint8_t> data(2048);
  for (auto& b : data) b = static_cast<std::uint8_t>(rng());
  std::size_t checked = 0;
  for (std::size_t n = 1; n <= 600; ++n) {
    const std::uint32_t seed = rng();
    const std::size_t offset = rng() % 7;  // unaligned starts too
    const weir::byte_span piece(data.data() + offset, n);
    CHECK(weir::crc32_of(piece, seed) == static_cast<std::uint32_t>(::crc32(seed, piece.data(), static_cast<uInt>(n))));
    ++checked;
  }
  CHECK(checked == 600);
  // A running CRC over two pieces equals the CRC of the whole.
  const weir::byte_span whole(data.data(), 1500);
  CHECK(weir::crc32_of(whole.subspan(100), weir::crc32_of(whole.first(100))) == weir::crc32_of(whole));
}
