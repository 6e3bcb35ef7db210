#include "wab/node_id_file.hpp"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace weir::wab {

namespace fs = std::filesystem;

int write_node_id(const std::string& data_dir, std::uint16_t node) {
  const fs::path path = fs::path(data_dir) / node_id_file_name;
  std::error_code ec;
  if (node == 0) {
    fs::remove(path, ec);
    return ec ? -ec.value() : 0;
  }
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << node << '\n';
    if (!out.flush()) return -EIO;
  }
  fs::rename(tmp, path, ec);
  return ec ? -ec.value() : 0;
}

std::uint16_t read_node_id(const std::string& data_dir) {
  std::ifstream in(fs::path(data_dir) / node_id_file_name);
  std::string text;
  if (!std::getline(in, text)) return 0;
  unsigned n = 0;
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (err != std::errc() || end != text.data() + text.size() || n == 0 || n > 65535) return 0;
  return static_cast<std::uint16_t>(n);
}

}  // namespace weir::wab
