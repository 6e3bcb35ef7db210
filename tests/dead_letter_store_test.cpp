// The dead-letter store's space limit: it stops taking letters once over
// drain.dead_letter_max_bytes, and it never refuses a batch forever.
#include <filesystem>

#include <catch2/catch.hpp>

#include "wab/dead_letter_store.hpp"
#include "wab/file_io.hpp"
#include "support/test_paths.hpp"

using namespace weir;

namespace {

sink_record record_of(std::size_t payload_bytes, std::uint64_t index) {
  sink_record r;
  r.id = std::string(64, 'a');
  r.segment = "shard_00/seg_00000001.wab";
  r.index = index;
  r.payload.assign(payload_bytes, 'x');
  return r;
}

}  // namespace

TEST_CASE("dead letters: a batch larger than the whole space is taken by an empty store", "[dead-letter]") {
  weir::test::temp_dir dir;
  std::filesystem::create_directory(dir / "dead_letter");
  dead_letter_store store(wab::default_file_io(), (dir / "dead_letter").string(), 1024 * 1024);
  // Three 400 KiB letters in one batch: more than the 1 MiB space on their own.
  std::vector<sink_record> records{record_of(400 * 1024, 1), record_of(400 * 1024, 2), record_of(400 * 1024, 3)};
  std::vector<dead_letter> letters;
  for (const auto& r : records) letters.push_back({&r, "refused"});
  std::string error;
  REQUIRE(store.store(letters, error) == dead_letter_store::result::stored);
  CHECK(store.bytes() > store.max_bytes());

  // Over the limit now: the next batch waits for room.
  std::vector<dead_letter> one{{&records[0], "refused"}};
  CHECK(store.store(one, error) == dead_letter_store::result::full);

  // The operator removes the files: room again.
  for (const auto& e : std::filesystem::directory_iterator(dir / "dead_letter")) std::filesystem::remove(e.path());
  store.rescan();
  CHECK(store.store(one, error) == dead_letter_store::result::stored);
}

TEST_CASE("dead letters: a store with letters refuses a batch that would pass the limit", "[dead-letter]") {
  weir::test::temp_dir dir;
  std::filesystem::create_directory(dir / "dead_letter");
  dead_letter_store store(wab::default_file_io(), (dir / "dead_letter").string(), 1024 * 1024);
  auto first = record_of(600 * 1024, 1), second = record_of(600 * 1024, 2);
  std::string error;
  REQUIRE(store.store({{&first, "refused"}}, error) == dead_letter_store::result::stored);
  CHECK(store.store({{&second, "refused"}}, error) == dead_letter_store::result::full);
}
