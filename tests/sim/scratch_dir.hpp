#pragma once
// A private directory for one simulated run, in /dev/shm when there is one
// (nothing is ever really synced, so RAM is the right place), removed again
// when the run ends.
#include <filesystem>

namespace weir::sim {

class scratch_dir {
 public:
  scratch_dir();
  ~scratch_dir();
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace weir::sim
