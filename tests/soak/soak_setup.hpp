#pragma once
// The soak's work directory and the daemon configuration it runs under.
#include <filesystem>
#include <string>
#include <vector>

#include "soak/options.hpp"

namespace weir::soak {

struct soak_paths {
  std::filesystem::path root;      // the work directory (the daemon's cwd)
  std::filesystem::path data_dir;  // root/var
  std::string socket;              // root/var/run/weir.sock
  std::filesystem::path sink;      // root/sink.db
  std::filesystem::path log;       // root/daemon.log, every run appended
  bool temporary = false;          // made by the soak: removed after a clean run
};

/// Creates the work directory (--dir, which must be absent or empty, or a
/// fresh one under /tmp); throws std::runtime_error when it cannot.
soak_paths make_work_dir(const options& o);

/// The daemon's --set flags: SQLite sink, several shards, small segments so
/// rotation and deletion never stop, admin server off (no port to collide on).
std::vector<std::string> daemon_args(const options& o, const soak_paths& p);

}  // namespace weir::soak
