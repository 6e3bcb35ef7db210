#include "actors/drain/trouble_log.hpp"

#include <cstring>

#include "observability/log.hpp"

namespace weir::drain_parts {

void trouble_log::report(const std::string& what, int rc) {
  const std::string line = what + ": " + std::strerror(-rc);
  if (in_trouble_ && line == last_) return;
  in_trouble_ = true;
  last_ = line;
  log::error("WAB housekeeping failed; retrying every " + std::to_string(retry_ms_) + " ms",
             {{"dir", dir_}, {"error", line}});
}

void trouble_log::all_well() {
  if (!in_trouble_) return;
  in_trouble_ = false;
  log::info("WAB housekeeping works again", {{"dir", dir_}});
}

}  // namespace weir::drain_parts
