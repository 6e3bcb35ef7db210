#pragma once
// Copies of damaged segments, kept in quarantine/ for inspection as
// "<shard-dir-name>__<file>" (".1", ".2"... when the name is taken). Both
// startup recovery and the drain (which verifies sealed segments as it reads
// them) put a damaged segment here, and neither adds a second copy of the
// same bytes.
#include <cstdint>
#include <string>

#include "wire/outcome.hpp"
#include "wab/file_io.hpp"

namespace weir::wab {

struct quarantined {
  std::string path;
  bool copied_before = false;  // an identical copy was already there
};

/// Copies the `size` bytes of `fd` (the segment `file` of `shard`) into
/// `quarantine_dir`, durably (file, then directory), unless the same bytes
/// are already there. The error says what failed.
outcome<quarantined, std::string> quarantine_copy(file_io& io, int fd, std::uint64_t size,
                                                  const std::string& quarantine_dir, const std::string& shard,
                                                  const std::string& file);

/// A free name in quarantine for the file `file` of `shard`.
std::string quarantine_name(const std::string& quarantine_dir, const std::string& shard, const std::string& file);

}  // namespace weir::wab
