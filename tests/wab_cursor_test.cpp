// The confirm cursor file: round trip, a store torn by a crash, a damaged
// file treated as absent (redeliver, never skip), and stores that need no
// free space once the file is reserved.
#include <sys/stat.h>

#include <filesystem>
#include <cstring>
#include <fstream>

#include <catch2/catch.hpp>

#include "wab/confirm_cursor.hpp"
#include "support/test_paths.hpp"

using namespace weir;
using namespace weir::wab;

namespace {

/// A disk with no free byte: creating a file or growing one fails with
/// ENOSPC, overwriting bytes a file already has does not.
class full_disk_io final : public posix_file_io {
 public:
  int create_exclusive(const std::string&) override { return -ENOSPC; }
  ssize_t pwrite(int fd, const std::uint8_t* data, std::size_t n, std::uint64_t offset) override {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || offset + n > static_cast<std::uint64_t>(st.st_size)) return -ENOSPC;
    return posix_file_io::pwrite(fd, data, n, offset);
  }
};

void flip_byte(const std::filesystem::path& file, std::streamoff at) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(at);
  const char c = static_cast<char>(f.get());
  f.seekp(at);
  f.put(static_cast<char>(c ^ 0x7f));
}

}  // namespace

TEST_CASE("a stored cursor loads back and a newer one replaces it", "[wab][cursor]") {
  test::temp_dir dir;
  auto io = default_file_io();
  CHECK_FALSE(load_cursor(*io, dir.path().string()));
  REQUIRE(store_cursor(*io, dir.path().string(), {3, 4096, 17}) == 0);
  auto c = load_cursor(*io, dir.path().string());
  REQUIRE(c);
  CHECK(*c == confirm_cursor{3, 4096, 17});
  cursor_file f(io, dir.path().string());
  CHECK(f.load() == confirm_cursor{3, 4096, 17});
  for (std::uint64_t i = 1; i <= 5; ++i) {
    REQUIRE(f.store({4, 32 + i, i}) == 0);
    CHECK(*load_cursor(*io, dir.path().string()) == confirm_cursor{4, 32 + i, i});
  }
  CHECK_FALSE(std::filesystem::exists(dir / "confirm_cursor.tmp"));
  CHECK(std::filesystem::file_size(dir / "confirm_cursor") == 8192);
}

TEST_CASE("a store torn by a crash leaves the cursor before it", "[wab][cursor]") {
  test::temp_dir dir;
  auto io = default_file_io();
  cursor_file f(io, dir.path().string());
  f.load();
  REQUIRE(f.store({1, 32, 1}) == 0);   // generation 1, slot 1
  REQUIRE(f.store({2, 64, 7}) == 0);   // generation 2, slot 0
  flip_byte(dir / "confirm_cursor", 20);  // slot 0 torn
  bool damaged = true;
  CHECK(load_cursor(*io, dir.path().string(), &damaged) == confirm_cursor{1, 32, 1});
  CHECK_FALSE(damaged);
  // The next store goes on from the cursor that survived.
  cursor_file again(io, dir.path().string());
  again.load();
  REQUIRE(again.store({3, 96, 2}) == 0);
  CHECK(load_cursor(*io, dir.path().string()) == confirm_cursor{3, 96, 2});
}

TEST_CASE("a cursor file that does not verify is reported and ignored", "[wab][cursor]") {
  test::temp_dir dir;
  auto io = default_file_io();
  REQUIRE(store_cursor(*io, dir.path().string(), {9, 100, 5}) == 0);
  flip_byte(dir / "confirm_cursor", 4096 + 10);  // the only slot in use
  bool damaged = false;
  CHECK_FALSE(load_cursor(*io, dir.path().string(), &damaged));
  CHECK(damaged);
  std::filesystem::resize_file(dir / "confirm_cursor", 20);  // cut short
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

TEST_CASE("a reserved cursor file takes stores on a disk with no free byte", "[wab][cursor][faults]") {
  test::temp_dir dir;
  cursor_file reserved(default_file_io(), dir.path().string());
  CHECK_FALSE(reserved.load());
  REQUIRE(reserved.reserve() == 0);
  CHECK(std::filesystem::file_size(dir / "confirm_cursor") == 8192);

  auto full = std::make_shared<full_disk_io>();
  cursor_file f(full, dir.path().string());
  CHECK_FALSE(f.load());
  for (std::uint64_t i = 1; i <= 3; ++i) REQUIRE(f.store({i, 32, 1}) == 0);
  CHECK(load_cursor(*default_file_io(), dir.path().string()) == confirm_cursor{3, 32, 1});

  // Without the reservation the same disk refuses the first store.
  test::temp_dir bare;
  cursor_file unreserved(full, bare.path().string());
  unreserved.load();
  CHECK(unreserved.store({1, 32, 1}) == -ENOSPC);
}

TEST_CASE("a version-1 cursor file is still read and is upgraded on reserve", "[wab][cursor]") {
  test::temp_dir dir;
  // "WCUR" | version 1 | sequence 5 | offset 80 | index 3 | crc32 of [0, 32)
  byte_buffer v1(36, 0);
  std::memcpy(v1.data(), "WCUR", 4);
  store_le32(v1.data() + 4, 1);
  store_le64(v1.data() + 8, 5);
  store_le64(v1.data() + 16, 80);
  store_le64(v1.data() + 24, 3);
  store_le32(v1.data() + 32, crc32_of(byte_span(v1.data(), 32)));
  std::ofstream(dir / "confirm_cursor", std::ios::binary).write(reinterpret_cast<const char*>(v1.data()), 36);
  cursor_file f(default_file_io(), dir.path().string());
  CHECK(f.load() == confirm_cursor{5, 80, 3});
  REQUIRE(f.reserve() == 0);
  CHECK(std::filesystem::file_size(dir / "confirm_cursor") == 8192);
  CHECK(load_cursor(*default_file_io(), dir.path().string()) == confirm_cursor{5, 80, 3});
}
