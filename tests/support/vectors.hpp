#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace weir::test {

nlohmann::json load_json(const std::filesystem::path& file);
std::vector<std::uint8_t> from_hex(const std::string& hex);

/// weir's own vectors, tests/vectors/wire_vectors.json.
const nlohmann::json& own_vectors();

}  // namespace weir::test
