#include "sim/scratch_dir.hpp"

#include <stdlib.h>

#include <stdexcept>
#include <string>

namespace weir::sim {

scratch_dir::scratch_dir() {
  std::error_code ec;
  const std::filesystem::path base =
      std::filesystem::is_directory("/dev/shm", ec) ? std::filesystem::path("/dev/shm")
                                                   : std::filesystem::temp_directory_path();
  std::string tmpl = (base / "weir-sim-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a scratch directory under " + base.string());
  path_ = tmpl;
}

scratch_dir::~scratch_dir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace weir::sim
