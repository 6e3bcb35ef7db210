#include "support/vectors.hpp"

#include <fstream>
#include <stdexcept>

#include "support/test_paths.hpp"

namespace weir::test {

nlohmann::json load_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  return nlohmann::json::parse(in);
}

std::vector<std::uint8_t> from_hex(const std::string& hex) {
  if (hex.size() % 2) throw std::invalid_argument("odd hex length");
  std::vector<std::uint8_t> out(hex.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

const nlohmann::json& own_vectors() {
  static const nlohmann::json v = load_json(source_dir() / "tests" / "vectors" / "wire_vectors.json");
  return v;
}

}  // namespace weir::test
