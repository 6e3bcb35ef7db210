#include <array>

#include "tests/fuzz/fuzz_targets.hpp"

namespace weir::fuzz {

std::span<const target> all_targets() {
  static constexpr std::array<target, 6> table = {{
      {"frame", weir_fuzz_frame},
      {"batch_body", weir_fuzz_batch_body},
      {"coordinate", weir_fuzz_coordinate},
      {"segment", weir_fuzz_segment},
      {"config_yaml", weir_fuzz_config_yaml},
      {"config_env", weir_fuzz_config_env},
  }};
  return table;
}

}  // namespace weir::fuzz
