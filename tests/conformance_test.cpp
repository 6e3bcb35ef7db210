// Every vector of the reference conformance files (v1, tracked, batch)
// against the codec. The files live outside this repository; when they are
// absent the test says so and checks nothing.
#include <catch2/catch.hpp>

#include "wire/batch.hpp"
#include "wire/coordinate.hpp"
#include "wire/frame.hpp"
#include "support/test_paths.hpp"
#include "support/vectors.hpp"

using namespace weir;
using namespace weir::wire;
using weir::test::from_hex;
using weir::test::load_json;

namespace {

std::uint8_t durability_byte(const std::string& name) {
  if (name == "Sync" || name == "Durable") return 0x01;
  if (name == "Batched") return 0x02;
  if (name == "Buffered") return 0x03;
  FAIL("unknown durability name in vector: " << name);
  return 0;
}

/// Checks a rejection verdict; true when the vector expects success instead.
template <class Outcome>
bool expects_ok(const Outcome& r, const nlohmann::json& v) {
  const std::string expected = v["decode"];
  if (expected == "ok") {
    REQUIRE(r);
    return true;
  }
  REQUIRE_FALSE(r);
  CHECK(name_of(r.error()) == expected);
  return false;
}

/// Checks one complete-frame vector; returns the number checked (1).
int check_frame_vector(const nlohmann::json& v) {
  INFO(v["name"].get<std::string>() << ": " << v.value("notes", ""));
  const auto bytes = from_hex(v["hex"]);
  auto r = decode_frame(bytes);
  if (!expects_ok(r, v)) return 1;
  CHECK(name_of(r.value().header.type) == v["message_type"].get<std::string>());
  CHECK(static_cast<std::uint8_t>(r.value().header.dur) == durability_byte(v["durability"]));
  CHECK(r.value().header.flags == v["flags"].get<int>());
  CHECK(to_hex(r.value().payload) == v["payload_hex"].get<std::string>());
  // Our encoder produces the identical bytes.
  CHECK(encode_frame(r.value().header.type, r.value().header.dur, r.value().payload) == bytes);
  return 1;
}

std::optional<std::filesystem::path> conformance_dir_or_warn() {
  auto dir = weir::test::reference_conformance_dir();
  if (!dir && weir::test::in_ci())
    FAIL("reference conformance vectors not found, and in CI they are always there (WEIR_CONFORMANCE_DIR or "
         "shared/reference/conformance beside the repository)");
  if (!dir)
    WARN("SKIPPED: reference conformance vectors not found (set WEIR_CONFORMANCE_DIR or place "
         "shared/reference/conformance beside the repository); nothing was checked");
  return dir;
}

}  // namespace

TEST_CASE("reference v1 vectors (30) against the codec", "[conformance]") {
  auto dir = conformance_dir_or_warn();
  if (!dir) return;
  const auto file = load_json(*dir / "wire_v1_vectors.json");
  int n = 0;
  for (const auto& v : file["vectors"]) n += check_frame_vector(v);
  CHECK(n == 30);
}

TEST_CASE("reference tracked vectors (11) against the codec", "[conformance]") {
  auto dir = conformance_dir_or_warn();
  if (!dir) return;
  const auto file = load_json(*dir / "wire_v1_tracked_vectors.json");
  int n = 0;
  for (const auto& v : file["frame_vectors"]) n += check_frame_vector(v);
  for (const auto& v : file["coordinate_vectors"]) {
    INFO(v["name"].get<std::string>());
    const auto bytes = from_hex(v["hex"]);
    auto r = decode_coordinate(bytes);
    ++n;
    if (!expects_ok(r, v)) continue;
    CHECK(r.value().segment == v["segment"].get<std::string>());
    CHECK(r.value().index == v["index"].get<std::uint64_t>());
    CHECK(to_hex(r.value().id) == v["record_id_hex"].get<std::string>());
    CHECK(encode_coordinate(r.value()) == bytes);
  }
  CHECK(n == 11);
}

TEST_CASE("the coordinate_hello record id follows the reference formula", "[conformance]") {
  auto dir = conformance_dir_or_warn();
  if (!dir) return;
  const auto file = load_json(*dir / "wire_v1_tracked_vectors.json");
  int found = 0;
  for (const auto& v : file["coordinate_vectors"]) {
    if (v["name"] != "coordinate_hello") continue;
    ++found;
    const std::string hello = "hello";
    auto id = compute_record_id(v["segment"].get<std::string>(), v["index"].get<std::uint64_t>(),
                                byte_span(reinterpret_cast<const std::uint8_t*>(hello.data()), hello.size()));
    CHECK(to_hex(id) == v["record_id_hex"].get<std::string>());
  }
  CHECK(found == 1);
}

TEST_CASE("reference batch vectors (26) against the codec", "[conformance]") {
  auto dir = conformance_dir_or_warn();
  if (!dir) return;
  const auto file = load_json(*dir / "wire_v1_batch_vectors.json");
  int n = 0;
  for (const auto& v : file["frame_vectors"]) n += check_frame_vector(v);
  for (const auto& v : file["body_vectors"]) {
    INFO(v["name"].get<std::string>());
    ++n;
    const auto bytes = from_hex(v["hex"]);
    auto r = decode_batch_body(bytes, batch_records_hard_cap, payload_hard_cap);
    if (!expects_ok(r, v)) continue;
    REQUIRE(r.value().size() == v["records_hex"].size());
    for (std::size_t i = 0; i < r.value().size(); ++i)
      CHECK(to_hex(r.value()[i]) == v["records_hex"][i].get<std::string>());
    CHECK(encode_batch_body(r.value()) == bytes);
  }
  for (const auto& v : file["ack_vectors"]) {
    INFO(v["name"].get<std::string>());
    ++n;
    const auto bytes = from_hex(v["hex"]);
    const auto expected_count = v["expected"].get<std::size_t>();
    auto r = decode_ack_batch(bytes, expected_count);
    if (!expects_ok(r, v)) continue;
    if (v.contains("accepted"))
      CHECK(r.value() == v["accepted"].get<std::vector<bool>>());
    else
      CHECK(r.value() == std::vector<bool>(expected_count, v["accepted_all"].get<bool>()));
    CHECK(encode_ack_batch_body(r.value()) == bytes);
  }
  CHECK(n == 26);
}
