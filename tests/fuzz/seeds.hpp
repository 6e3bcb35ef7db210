#pragma once
// Seed inputs for every fuzz target, derived from the project's own files:
// the wire vectors (ours and the reference conformance files), the shipped
// configuration and the settings table, and a segment written by the real
// segment writer. Nothing here is stored in git; make fuzz regenerates it.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "wire/bytes.hpp"

namespace weir::fuzz {

struct seed_sources {
  std::filesystem::path source_dir;                      // the repository
  std::optional<std::filesystem::path> conformance_dir;  // reference vectors, when present
  std::filesystem::path scratch_dir;                     // where a real segment is written
};

/// Target name -> its seed inputs, in that target's input layout.
using seed_set = std::map<std::string, std::vector<byte_buffer>, std::less<>>;

seed_set derive_seeds(const seed_sources& sources);

}  // namespace weir::fuzz
