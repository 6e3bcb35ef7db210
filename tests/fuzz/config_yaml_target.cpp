// config_yaml: load_config on the bytes as the YAML configuration file.
// Rejection (config_error) is the expected verdict on almost every input;
// anything else escaping load_config is a finding.
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/fuzz_targets.hpp"

int weir_fuzz_config_yaml(const std::uint8_t* data, std::size_t size) {
  // The loader reads a path, as the daemon does: the file is the input.
  static const std::string path = (weir::fuzz::scratch_dir() / "weir.yaml").string();
  weir::fuzz::write_file(path, weir::byte_span(data, size));
  weir::config_sources sources;
  sources.file = path;
  weir::fuzz::load_config_or_reject(sources);
  return 0;
}
