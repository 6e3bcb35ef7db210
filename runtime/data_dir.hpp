#pragma once
// The daemon's private directory: created 0700, and held by one process at a
// time through an exclusive lock on data_dir/weir.lock.
#include <string>

namespace weir {

/// Creates `dir` and any missing parents with mode 0700. A directory that
/// already exists keeps its mode (a warning when others may write to it
/// without a sticky bit). Throws startup_error.
void ensure_private_directory(const std::string& dir, const std::string& config_key);

class data_dir_lock {
 public:
  /// Throws startup_error naming the pid of the holder when already locked.
  explicit data_dir_lock(const std::string& data_dir);
  ~data_dir_lock();
  data_dir_lock(const data_dir_lock&) = delete;
  data_dir_lock& operator=(const data_dir_lock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace weir
