#pragma once
// The fuzz targets. Each takes any bytes and must never crash, hang or read
// out of bounds; a broken invariant throws weir::fuzz::violation. libFuzzer
// calls them through fuzz_main.cpp (one executable per target, make fuzz);
// tests/fuzz_regressions_test.cpp calls them directly in the normal suite.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wire/bytes.hpp"

int weir_fuzz_frame(const std::uint8_t* data, std::size_t size);
int weir_fuzz_batch_body(const std::uint8_t* data, std::size_t size);
int weir_fuzz_coordinate(const std::uint8_t* data, std::size_t size);
int weir_fuzz_segment(const std::uint8_t* data, std::size_t size);
int weir_fuzz_config_yaml(const std::uint8_t* data, std::size_t size);
int weir_fuzz_config_env(const std::uint8_t* data, std::size_t size);

namespace weir::fuzz {

using target_fn = int (*)(const std::uint8_t*, std::size_t);

struct target {
  std::string_view name;  // fuzz_<name> is the executable, regressions/<name>/ its crash inputs
  target_fn run;
};

/// Every target, in the order `make fuzz` runs them.
std::span<const target> all_targets();

// Input builders, for seeds. A target's input layout is defined once, in its
// own source file; the seed maker builds inputs only through these.

/// frame: `chunk_codes` are the feed sizes minus one, cycled (none: one
/// chunk); `cap_code` picks the payload cap (0: the hard cap).
byte_buffer frame_input(byte_span stream, std::span<const std::uint8_t> chunk_codes, std::uint8_t cap_code);

/// batch_body: the decoders' caps and the AckBatch count, then the body.
byte_buffer batch_body_input(std::uint16_t max_records, std::uint32_t record_cap,
                             std::uint16_t ack_expected, byte_span body);

/// config_env: `env` entries (the leading "WEIR_" may be left out), `overrides` as
/// given to --set.
byte_buffer config_env_input(const std::vector<std::string>& env, const std::vector<std::string>& overrides);

}  // namespace weir::fuzz
