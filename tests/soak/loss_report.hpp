#pragma once
// For a lost record, where it still is: a record in the WAB but not in the
// sink points at delivery; one in neither points at the write path or at
// recovery.
#include <filesystem>
#include <string>
#include <vector>

#include "soak/payload.hpp"

namespace weir::soak {

/// One line per record: its coordinate in the WAB, or that no segment holds it.
std::vector<std::string> locate_in_wab(const std::filesystem::path& data_dir, const std::vector<record_origin>& records);

}  // namespace weir::soak
