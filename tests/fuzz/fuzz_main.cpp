// libFuzzer entry point. Compiled once per target with WEIR_FUZZ_ENTRY set to
// that target's function, so each target is its own fuzz_<name> executable
// (libFuzzer needs exactly one LLVMFuzzerTestOneInput per binary).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_targets.hpp"

#ifndef WEIR_FUZZ_ENTRY
#error "define WEIR_FUZZ_ENTRY to the weir_fuzz_<name> function this executable runs"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return WEIR_FUZZ_ENTRY(data, size);
}
