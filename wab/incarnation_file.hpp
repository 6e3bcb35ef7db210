#pragma once
// data_dir/incarnation: which life of its node a data directory is. A new,
// random one is made with a WAB that holds nothing yet (a new machine, or a
// wiped disk under an old cluster.node_id); a WAB that already holds
// segments or a cursor keeps the one it has (or gets one, the same life
// going on). Peers keep their copies of a node per incarnation: a copy of an
// earlier life is delivered by the peer that holds it, never continued by
// the next life (docs/cluster.md, "Node lives"). Sixteen hex digits and a
// newline; written through a temporary file, synced and renamed.
#include <cstdint>
#include <optional>
#include <string>

namespace weir::wab {

inline constexpr const char* incarnation_file_name = "incarnation";

/// The incarnation recorded in `dir`, if any (and a well-formed one).
std::optional<std::uint64_t> read_incarnation(const std::string& dir);

/// Records `incarnation` in `dir`, durably. Returns 0 or -errno.
int write_incarnation(const std::string& dir, std::uint64_t incarnation);

/// A new random incarnation, never 0 (0 means "not known").
std::uint64_t new_incarnation();

/// "0123456789abcdef"
std::string incarnation_text(std::uint64_t incarnation);

}  // namespace weir::wab
