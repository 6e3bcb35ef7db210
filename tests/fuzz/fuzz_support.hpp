#pragma once
// What every fuzz target shares: reading choices from the front of the input,
// checking invariants, a private scratch directory, and the config verdict.
// The targets themselves are in *_target.cpp; fuzz_targets.hpp lists them.
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include "config/loader.hpp"
#include "wire/bytes.hpp"

namespace weir::fuzz {

/// Takes little-endian integers, byte runs and lines from the front of a
/// fuzz input. Missing bytes read as zero, so every input, however short, is
/// a valid layout: no execution is wasted on a length check.
class input_reader {
 public:
  input_reader(const std::uint8_t* data, std::size_t size) : rest_(data, size) {}

  std::uint8_t u8();
  std::uint16_t u16();
  std::uint32_t u32();
  /// Up to `n` bytes.
  byte_span take(std::size_t n);
  /// The bytes up to the next '\n' (which is consumed), or all that is left.
  std::string_view line();
  byte_span rest() const { return rest_; }
  bool empty() const { return rest_.empty(); }

 private:
  byte_span rest_;
};

/// A broken invariant. Thrown rather than aborted on: under libFuzzer the
/// uncaught exception aborts inside the throw (the stack names the check),
/// and the Catch2 replay reports it as a failure of that one input.
struct violation : std::logic_error {
  using std::logic_error::logic_error;
};
[[noreturn]] void violated(const char* check, const char* file, int line);

#define WEIR_FUZZ_CHECK(cond) ((cond) ? void() : ::weir::fuzz::violated(#cond, __FILE__, __LINE__))

/// A directory under /tmp private to this process (mkdtemp), created on first
/// use and removed at exit: concurrent fuzzers and test runs never share files.
const std::filesystem::path& scratch_dir();
/// `scratch_dir()/name`, empty (whatever an earlier input left there is gone).
std::filesystem::path fresh_dir(const std::string& name);

void write_file(const std::filesystem::path& path, byte_span bytes);
byte_buffer read_file(const std::filesystem::path& path);

/// Loads a configuration and renders it back. A config_error is the expected
/// verdict on a bad input; any other exception escapes and is a finding.
void load_config_or_reject(const config_sources& sources);

}  // namespace weir::fuzz
