#include "support/test_paths.hpp"

#include <cstdlib>
#include <stdexcept>
#include <system_error>

namespace weir::test {

std::filesystem::path source_dir() { return WEIR_SOURCE_DIR; }

std::filesystem::path binary(const std::string& name) {
  // WEIR_TEST_BIN_DIR runs the live tests against another build's binaries
  // (e.g. an older commit's, to see a test fail on the code it guards).
  if (const char* dir = std::getenv("WEIR_TEST_BIN_DIR")) return std::filesystem::path(dir) / name;
  return std::filesystem::path(WEIR_BIN_DIR) / name;
}

bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci && *ci && std::string(ci) != "false" && std::string(ci) != "0";
}

std::optional<std::filesystem::path> reference_conformance_dir() {
  std::filesystem::path dir;
  if (const char* env = std::getenv("WEIR_CONFORMANCE_DIR"))
    dir = env;
  else
    dir = source_dir().parent_path() / "shared" / "reference" / "conformance";
  if (std::filesystem::exists(dir / "wire_v1_vectors.json")) return dir;
  return std::nullopt;
}

temp_dir::temp_dir() {
  char pattern[] = "/tmp/weir-test-XXXXXX";
  if (!::mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

temp_dir::~temp_dir() {
  // WEIR_TEST_KEEP=1 leaves every test's directory (data dirs, daemon logs)
  // for a look after a failure.
  if (const char* keep = std::getenv("WEIR_TEST_KEEP"); keep && *keep && std::string(keep) != "0") return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace weir::test
