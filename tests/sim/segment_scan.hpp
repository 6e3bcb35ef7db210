#pragma once
// Reads one segment file through the file I/O seam the way the drain does —
// from a position, resynchronising past damage — for the invariants that ask
// what the daemon will read, not what the sim thinks is there.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "wab/file_io.hpp"
#include "wab/segment_format.hpp"

namespace weir::sim {

/// (index, payload) of every record from `offset` on; empty when the file
/// cannot be opened or its header does not check.
std::vector<std::pair<std::uint64_t, std::string>> scan_segment(wab::file_io& io, const std::string& path,
                                                                std::uint64_t offset = 0,  // 0: from the first record
                                                                std::uint64_t index = 1);

}  // namespace weir::sim
