#pragma once
#include <filesystem>
#include <optional>
#include <string>

namespace weir::test {

std::filesystem::path source_dir();
std::filesystem::path binary(const std::string& name);

/// The reference conformance vectors: $WEIR_CONFORMANCE_DIR, or
/// ../shared/reference/conformance beside the source tree; nullopt if absent.
std::optional<std::filesystem::path> reference_conformance_dir();

/// Whether the suite runs in CI (CI is set), where every input a test needs
/// is present: a test must fail there instead of skipping.
bool in_ci();

/// A fresh directory under /tmp (short, so socket paths fit), removed on exit.
class temp_dir {
 public:
  temp_dir();
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& rel) const { return path_ / rel; }

 private:
  std::filesystem::path path_;
};

}  // namespace weir::test
