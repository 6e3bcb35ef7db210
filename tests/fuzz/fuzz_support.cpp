#include "tests/fuzz/fuzz_support.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <system_error>

namespace weir::fuzz {

std::uint8_t input_reader::u8() {
  const auto b = take(1);
  return b.empty() ? 0 : b[0];
}

std::uint16_t input_reader::u16() {
  const std::uint16_t lo = u8();
  return static_cast<std::uint16_t>(lo | (u8() << 8));
}

std::uint32_t input_reader::u32() {
  const std::uint32_t lo = u16();
  return lo | (static_cast<std::uint32_t>(u16()) << 16);
}

byte_span input_reader::take(std::size_t n) {
  const auto out = rest_.first(std::min(n, rest_.size()));
  rest_ = rest_.subspan(out.size());
  return out;
}

std::string_view input_reader::line() {
  const auto nl = std::find(rest_.begin(), rest_.end(), std::uint8_t{'\n'});
  const auto n = static_cast<std::size_t>(nl - rest_.begin());
  const std::string_view out(reinterpret_cast<const char*>(rest_.data()), n);
  rest_ = rest_.subspan(std::min(n + 1, rest_.size()));
  return out;
}

void violated(const char* check, const char* file, int line) {
  throw violation(std::string(file) + ":" + std::to_string(line) + ": invariant broken: " + check);
}

namespace {

std::filesystem::path make_scratch_dir() {
  // $TMPDIR when set: the segment target fsyncs on every input, and make fuzz
  // points it at a tmpfs so that costs nothing.
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/weir-fuzz-XXXXXX";
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed under " + pattern);
  // Static storage outlives every input; atexit removes the directory when
  // libFuzzer (or the test run) exits normally. A crash leaves it for inspection.
  std::atexit([] {
    std::error_code ignored;
    std::filesystem::remove_all(scratch_dir(), ignored);
  });
  return pattern;
}

}  // namespace

const std::filesystem::path& scratch_dir() {
  // Never destroyed: the atexit handler above runs after static destructors
  // registered later, so it must not find this path already gone.
  static const auto* dir = new std::filesystem::path(make_scratch_dir());
  return *dir;
}

std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = scratch_dir() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directory(dir);
  return dir;
}

void write_file(const std::filesystem::path& path, byte_span bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

byte_buffer read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return byte_buffer(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void load_config_or_reject(const config_sources& sources) {
  try {
    const config c = load_config(sources);
    // --print-config renders whatever was accepted; it must not fail on it.
    WEIR_FUZZ_CHECK(!render_config(c).empty());
  } catch (const config_error& e) {
    // Every rejection names itself the same way (the daemon prints it as is).
    WEIR_FUZZ_CHECK(std::string_view(e.what()).starts_with("config error: "));
  }
}

}  // namespace weir::fuzz
