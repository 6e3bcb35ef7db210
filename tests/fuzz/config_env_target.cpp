// config_env: load_config on environment variables and --set overrides.
//
// Input: lines. A line starting with "--set " is an override (the rest of
// the line); any other line is an environment entry, "WEIR_" + the line, so
// the fuzzer spends its time on names the loader looks at. No file is read.
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/fuzz_targets.hpp"

namespace {
constexpr std::string_view set_prefix = "--set ";
constexpr std::string_view env_prefix = "WEIR_";
}  // namespace

int weir_fuzz_config_env(const std::uint8_t* data, std::size_t size) {
  weir::config_sources sources;
  for (weir::fuzz::input_reader in(data, size); !in.empty();) {
    const std::string_view line = in.line();
    if (line.starts_with(set_prefix))
      sources.overrides.emplace_back(line.substr(set_prefix.size()));
    else
      sources.env.push_back(std::string(env_prefix) + std::string(line));
  }
  weir::fuzz::load_config_or_reject(sources);
  return 0;
}

namespace weir::fuzz {

byte_buffer config_env_input(const std::vector<std::string>& env, const std::vector<std::string>& overrides) {
  std::string text;
  for (const auto& e : env) text += (e.starts_with(env_prefix) ? e.substr(env_prefix.size()) : e) + "\n";
  for (const auto& o : overrides) text += std::string(set_prefix) + o + "\n";
  return byte_buffer(text.begin(), text.end());
}

}  // namespace weir::fuzz
