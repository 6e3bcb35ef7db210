// Replays every fuzz target's saved crash inputs (tests/fuzz/regressions/<target>/,
// written by make fuzz) and its seeds through the same weir_fuzz_<name>
// functions libFuzzer runs, compiled normally: a bug the fuzzer found once
// stays found, without clang or libFuzzer. Under make test-asan the
// sanitizers watch these inputs too.
#include <algorithm>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "support/test_paths.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/fuzz_targets.hpp"
#include "tests/fuzz/seeds.hpp"

using namespace weir;

namespace {

const fuzz::target& target_named(std::string_view name) {
  const auto all = fuzz::all_targets();
  const auto found = std::find_if(all.begin(), all.end(), [&](const auto& t) { return t.name == name; });
  REQUIRE(found != all.end());
  return *found;
}

/// Runs one input; a broken invariant or an escaping exception fails the test
/// and names the input.
void run_input(const fuzz::target& t, const std::string& label, const byte_buffer& input) {
  INFO("fuzz target " << t.name << ", input " << label << " (" << input.size() << " bytes)");
  CHECK_NOTHROW(t.run(input.data(), input.size()));
}

/// Every saved crash input of the target, then every seed; returns how many ran.
std::size_t replay(std::string_view name) {
  const auto& t = target_named(name);
  std::size_t ran = 0;
  const auto dir = test::source_dir() / "tests" / "fuzz" / "regressions" / std::string(name);
  if (std::filesystem::is_directory(dir)) {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.is_regular_file()) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      run_input(t, file.string(), fuzz::read_file(file));
      ++ran;
    }
  }
  test::temp_dir scratch;
  const auto seeds = fuzz::derive_seeds({test::source_dir(), test::reference_conformance_dir(), scratch.path()});
  if (const auto found = seeds.find(name); found != seeds.end())
    for (std::size_t i = 0; i < found->second.size(); ++i, ++ran)
      run_input(t, "seed " + std::to_string(i), found->second[i]);
  return ran;
}

}  // namespace

TEST_CASE("fuzz regressions: frame reader inputs replay cleanly", "[fuzz][wire]") {
  REQUIRE(replay("frame") > 0);
}

TEST_CASE("fuzz regressions: batch body inputs replay cleanly", "[fuzz][wire]") {
  REQUIRE(replay("batch_body") > 0);
}

TEST_CASE("fuzz regressions: coordinate inputs replay cleanly", "[fuzz][wire]") {
  REQUIRE(replay("coordinate") > 0);
}

TEST_CASE("fuzz regressions: segment and recovery inputs replay cleanly", "[fuzz][wab]") {
  REQUIRE(replay("segment") > 0);
}

TEST_CASE("fuzz regressions: config file inputs replay cleanly", "[fuzz][config]") {
  REQUIRE(replay("config_yaml") > 0);
}

TEST_CASE("fuzz regressions: config environment inputs replay cleanly", "[fuzz][config]") {
  REQUIRE(replay("config_env") > 0);
}
