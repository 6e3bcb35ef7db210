// weir-ctl wab reads a shard's segments as the drain does: past a damaged
// record to the next one that checks, and says so.
#include <chrono>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/daemon_process.hpp"
#include "support/test_paths.hpp"
#include "wab/file_io.hpp"
#include "wab/segment_format.hpp"
#include "wab/segment_writer.hpp"

using namespace weir;

TEST_CASE("weir-ctl wab reads past a damaged record and reports it", "[ctl][wab]") {
  test::temp_dir dir;
  const auto shard = dir / "var/wab/shard_00";
  std::filesystem::create_directories(shard);
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch()).count();
  {
    auto seg = wab::segment_writer::create(wab::default_file_io(), shard.string(), 0, 1, now);
    REQUIRE(seg);
    const std::string a = "alpha", b = "bravo", c = "charlie";
    const std::vector<byte_span> records{byte_span(reinterpret_cast<const std::uint8_t*>(a.data()), a.size()),
                                         byte_span(reinterpret_cast<const std::uint8_t*>(b.data()), b.size()),
                                         byte_span(reinterpret_cast<const std::uint8_t*>(c.data()), c.size())};
    REQUIRE(seg.value()->append(records, now).error == 0);
    REQUIRE(seg.value()->sync() == 0);
  }
  // Flip a payload byte of "bravo", the second record.
  const auto file = shard / wab::segment_file_name(1);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(wab::segment_prefix_size + wab::record_header_size + 5 + wab::record_header_size));
    f.put('X');
  }
  const auto r = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "var", "--json", "wab"}, dir.path());
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& seg = j.at(0).at("segments").at(0);
  CHECK(seg.at("records") == 2);  // alpha and charlie: reading went on past the damage
  CHECK(seg.at("damaged") == 1);
  CHECK(seg.at("recovered") == 0);
  CHECK(seg.at("sealed") == false);  // synced, never sealed: as a crash leaves the open segment
  CHECK(seg.at("record_bytes") == wab::segment_prefix_size + 3 * wab::record_header_size + 5 + 5 + 7);
  const auto text = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "var", "wab"}, dir.path());
  CHECK(text.out.find("DAMAGED: 1 record(s) read past") != std::string::npos);
}

TEST_CASE("weir-ctl wab tells sealed segments from the open one and counts spares", "[ctl][wab]") {
  test::temp_dir dir;
  const auto shard = dir / "var/wab/shard_00";
  std::filesystem::create_directories(shard);
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string a = "alpha";
  const std::vector<byte_span> one{byte_span(reinterpret_cast<const std::uint8_t*>(a.data()), a.size())};
  for (std::uint64_t seq : {1, 2}) {
    auto seg = wab::segment_writer::create(wab::default_file_io(), shard.string(), 0, seq, now);
    REQUIRE(seg);
    REQUIRE(seg.value()->append(one, now).error == 0);
    REQUIRE((seq == 1 ? seg.value()->seal() : seg.value()->sync()) == 0);
  }
  std::ofstream(shard / "spare_00000003.wab") << std::string(4096, '\0');
  const auto r = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "var", "--json", "wab"}, dir.path());
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at(0).at("spares") == 1);
  const auto& segs = j.at(0).at("segments");
  REQUIRE(segs.size() == 2);
  CHECK(segs.at(0).at("end") == "sealed");
  CHECK(segs.at(0).at("sealed") == true);
  CHECK(segs.at(1).at("end") == "open");
  CHECK(segs.at(1).at("records") == 1);
  const auto text = test::run_binary(test::binary("weir-ctl"), {"--data-dir", "var", "wab"}, dir.path());
  CHECK(text.out.find("spares: 1") != std::string::npos);
  CHECK(text.out.find("(sealed)") != std::string::npos);
}
