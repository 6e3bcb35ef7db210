// The confirm cursor file: round trip, atomic replacement, and a damaged
// file treated as absent (redeliver, never skip).
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "runtime/wab/confirm_cursor.hpp"
#include "support/test_paths.hpp"

using namespace weir;
using namespace weir::wab;

TEST_CASE("a stored cursor loads back and a newer one replaces it whole", "[wab][cursor]") {
  test::temp_dir dir;
  auto io = default_file_io();
  CHECK_FALSE(load_cursor(*io, dir.path().string()));
  REQUIRE(store_cursor(*io, dir.path().string(), {3, 4096, 17}) == 0);
  auto c = load_cursor(*io, dir.path().string());
  REQUIRE(c);
  CHECK(*c == confirm_cursor{3, 4096, 17});
  REQUIRE(store_cursor(*io, dir.path().string(), {4, 32, 1}) == 0);
  CHECK(*load_cursor(*io, dir.path().string()) == confirm_cursor{4, 32, 1});
  CHECK_FALSE(std::filesystem::exists(dir / "confirm_cursor.tmp"));
  CHECK(std::filesystem::file_size(dir / "confirm_cursor") == 36);
}

TEST_CASE("a cursor that does not verify is reported and ignored", "[wab][cursor]") {
  test::temp_dir dir;
  auto io = default_file_io();
  REQUIRE(store_cursor(*io, dir.path().string(), {9, 100, 5}) == 0);
  {
    std::fstream f(dir / "confirm_cursor", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(10);
    f.put('\x7f');  // a flipped byte in the sequence
  }
  bool damaged = false;
  CHECK_FALSE(load_cursor(*io, dir.path().string(), &damaged));
  CHECK(damaged);
  std::filesystem::resize_file(dir / "confirm_cursor", 20);  // torn
  CHECK_FALSE(load_cursor(*io, dir.path().string(), &damaged));
  CHECK(damaged);
}

TEST_CASE("a temporary file left by a crash does not stop the next store", "[wab][cursor]") {
  test::temp_dir dir;
  auto io = default_file_io();
  std::ofstream(dir / "confirm_cursor.tmp") << "half";
  REQUIRE(store_cursor(*io, dir.path().string(), {1, 32, 1}) == 0);
  CHECK(*load_cursor(*io, dir.path().string()) == confirm_cursor{1, 32, 1});
}
