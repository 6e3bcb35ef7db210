// The dead-letter store's space limit: it stops taking letters once over
// drain.dead_letter_max_bytes, and it never refuses a batch forever. And its
// files' lock: a file weir-ctl holds to requeue or delete gets no letter.
#include <filesystem>
#include <set>

#include <catch2/catch.hpp>

#include "wab/dead_letter_store.hpp"
#include "wab/file_io.hpp"
#include "wab/file_lock.hpp"
#include "support/test_paths.hpp"
#include "support/wab_contents.hpp"

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

std::set<std::filesystem::path> files_in(const std::filesystem::path& dir) {
  std::set<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.insert(e.path());
  return out;
}

std::size_t letters_in(const std::filesystem::path& file) { return test::read_segment_file(file).payloads.size(); }

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

TEST_CASE("dead letters: a file weir-ctl holds gets no more letters and neither does one it removed",
          "[dead-letter][ctl]") {
  weir::test::temp_dir dir;
  const auto dl = dir / "dead_letter";
  std::filesystem::create_directory(dl);
  dead_letter_store store(wab::default_file_io(), dl.string(), 1024 * 1024);
  const auto a = record_of(10, 1), b = record_of(10, 2), c = record_of(10, 3), d = record_of(10, 4);
  std::string error;
  REQUIRE(store.store({{&a, "refused"}}, error) == dead_letter_store::result::stored);
  REQUIRE(files_in(dl).size() == 1);
  const auto first = *files_in(dl).begin();
  {
    // weir-ctl holds the file it is about to read and requeue: the store does not wait for it.
    wab::file_lock ctl(first.string());
    REQUIRE(ctl.lock(true));
    REQUIRE(store.store({{&b, "refused"}}, error) == dead_letter_store::result::stored);
    CHECK(letters_in(first) == 1);
    REQUIRE(files_in(dl).size() == 2);
  }
  // Let go without removing it (weir-ctl failed): still never appended to again.
  REQUIRE(store.store({{&c, "refused"}}, error) == dead_letter_store::result::stored);
  CHECK(letters_in(first) == 1);
  auto now = files_in(dl);
  now.erase(first);
  REQUIRE(now.size() == 1);
  const auto second = *now.begin();
  CHECK(letters_in(second) == 2);
  {
    // weir-ctl removes the file being appended to, under its lock.
    wab::file_lock ctl(second.string());
    REQUIRE(ctl.lock(true));
    std::filesystem::remove(second);
  }
  REQUIRE(store.store({{&d, "refused"}}, error) == dead_letter_store::result::stored);
  now = files_in(dl);
  now.erase(first);
  REQUIRE(now.size() == 1);
  CHECK(*now.begin() != second);
  CHECK(letters_in(*now.begin()) == 1);
}
