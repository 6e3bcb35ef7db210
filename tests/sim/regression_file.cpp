#include "sim/regression_file.hpp"

#include <algorithm>
#include <fstream>

namespace weir::sim {

namespace {

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r");
  const auto e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

bool parse_number(const std::string& s, std::uint64_t& out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 19) return false;
  out = std::stoull(s);
  return true;
}

}  // namespace

std::optional<regression_seed> read_regression(const std::filesystem::path& file, std::string& error) {
  std::ifstream in(file);
  if (!in) {
    error = file.string() + ": cannot read";
    return std::nullopt;
  }
  regression_seed r;
  r.file = file;
  bool have_seed = false, in_caught = false;
  std::string line;
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.empty()) continue;
    if (line[0] == '#') {
      const std::string body = trim(line.substr(1));
      if (body.rfind("caught:", 0) == 0) {
        r.caught = trim(body.substr(7));
        in_caught = true;
      } else if (body.rfind("known-bug:", 0) == 0) {
        r.known_bug = trim(body.substr(10));
        in_caught = false;
      } else if (in_caught && !body.empty()) {
        r.caught += " " + body;  // the "caught:" paragraph goes on
      }
      continue;
    }
    in_caught = false;
    const auto eq = line.find('=');
    const std::string key = trim(line.substr(0, eq)), value = eq == std::string::npos ? "" : trim(line.substr(eq + 1));
    std::uint64_t n = 0;
    if (key == "seed" && parse_number(value, n)) {
      r.seed = n;
      have_seed = true;
    } else if (key == "steps" && parse_number(value, n) && n > 0 && n <= 1000000) {
      r.steps = static_cast<unsigned>(n);
    } else if (key == "wiring" && (value == "daemon" || value == "separate")) {
      r.wiring = value == "daemon" ? sync_wiring::daemon : sync_wiring::separate;
    } else {
      error = file.string() + ": cannot read line '" + line + "'";
      return std::nullopt;
    }
  }
  if (!have_seed) {
    error = file.string() + ": no 'seed=N' line";
    return std::nullopt;
  }
  if (r.caught.empty()) {
    error = file.string() + ": no '# caught:' comment saying what it caught";
    return std::nullopt;
  }
  return r;
}

std::vector<std::filesystem::path> regression_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_regular_file()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace weir::sim
