#include "tests/fuzz/seeds.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

#include "config/loader.hpp"
#include "config/schema.hpp"
#include "wire/frame.hpp"
#include "wab/file_io.hpp"
#include "wab/segment_writer.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/fuzz_targets.hpp"

namespace weir::fuzz {

namespace {

byte_buffer from_hex(std::string_view hex) {
  if (hex.size() % 2) throw std::invalid_argument("odd hex length");
  auto digit = [](char c) -> std::uint8_t {
    if (c >= '0' && c <= '9') return static_cast<std::uint8_t>(c - '0');
    if (c >= 'a' && c <= 'f') return static_cast<std::uint8_t>(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') return static_cast<std::uint8_t>(c - 'A' + 10);
    throw std::invalid_argument("not a hex digit");
  };
  byte_buffer out;
  for (std::size_t i = 0; i < hex.size(); i += 2)
    out.push_back(static_cast<std::uint8_t>(digit(hex[i]) << 4 | digit(hex[i + 1])));
  return out;
}

nlohmann::json load_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  return nlohmann::json::parse(in);
}

std::uint16_t declared_count(byte_span body) { return body.size() >= 3 ? load_le16(body.data() + 1) : 0; }

/// Turns wire vectors into inputs. A frame also seeds the decoder of its
/// payload: a PushBatch its body, an AckBatch its bitmap, an AckTracked its
/// coordinate, so each target starts from every example the project has.
class wire_seeds {
 public:
  explicit wire_seeds(seed_set& out) : out_(out) {}

  void frame(byte_span f) {
    static constexpr std::array<std::uint8_t, 1> byte_by_byte = {0};
    out_["frame"].push_back(frame_input(f, {}, 0));
    out_["frame"].push_back(frame_input(f, byte_by_byte, 0));
    append_bytes(stream_, f);
    const auto decoded = wire::decode_frame(f);
    if (!decoded) return;
    const auto payload = decoded.value().payload;
    switch (decoded.value().header.type) {
      case wire::message_type::push_batch: batch_body(payload); break;
      case wire::message_type::ack_batch: ack_batch(payload, declared_count(payload)); break;
      case wire::message_type::ack_tracked:
        coordinate(payload);
        coordinate(f);
        break;
      default: break;
    }
  }

  void batch_body(byte_span body) {
    const auto count = declared_count(body);
    out_["batch_body"].push_back(batch_body_input(max_batch_records_, wire::payload_hard_cap, count, body));
    // Caps just below what the vectors need, so the cap checks fire too.
    out_["batch_body"].push_back(batch_body_input(2, 3, count, body));
  }

  void ack_batch(byte_span body, std::uint16_t expected) {
    out_["batch_body"].push_back(batch_body_input(max_batch_records_, wire::payload_hard_cap, expected, body));
  }

  void coordinate(byte_span c) { out_["coordinate"].emplace_back(c.begin(), c.end()); }

  /// Every frame seen, back to back: pipelined traffic in odd chunk sizes,
  /// under the hard cap and under a 16-byte cap.
  void finish() {
    static constexpr std::array<std::uint8_t, 4> odd_chunks = {0, 6, 15, 2};
    out_["frame"].push_back(frame_input(stream_, odd_chunks, 0));
    out_["frame"].push_back(frame_input(stream_, odd_chunks, 6));
  }

  /// Every list of hex vectors in `file`, whatever the file calls it.
  void file(const std::filesystem::path& file) {
    enum class kind { frame, batch_body, ack_batch, coordinate };
    static constexpr std::pair<std::string_view, kind> lists[] = {
        {"frames", kind::frame},           {"vectors", kind::frame},
        {"frame_vectors", kind::frame},    {"batch_bodies", kind::batch_body},
        {"body_vectors", kind::batch_body}, {"ack_batches", kind::ack_batch},
        {"ack_vectors", kind::ack_batch},  {"coordinates", kind::coordinate},
        {"coordinate_vectors", kind::coordinate}};
    const auto json = load_json(file);
    for (const auto& [list, k] : lists) {
      if (!json.contains(list)) continue;
      for (const auto& v : json[std::string(list)]) {
        if (!v.contains("hex")) continue;
        const auto bytes = from_hex(v["hex"].get<std::string>());
        switch (k) {
          case kind::frame: frame(bytes); break;
          case kind::batch_body: batch_body(bytes); break;
          case kind::ack_batch: ack_batch(bytes, v.value("expected", declared_count(bytes))); break;
          case kind::coordinate: coordinate(bytes); break;
        }
      }
    }
  }

 private:
  seed_set& out_;
  byte_buffer stream_;
  const std::uint16_t max_batch_records_ = static_cast<std::uint16_t>(default_config().limits.max_batch_records);
};

/// A segment as the daemon writes it, and the ways a crash or a bad disk
/// leaves one: a zero-filled tail, a torn last record, a flipped byte.
void segment_seeds(const std::filesystem::path& scratch, std::vector<byte_buffer>& out) {
  const auto dir = scratch / "seed_segment";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto writer = wab::segment_writer::create(wab::default_file_io(), dir.string(), 0, 1, 1);
  if (!writer) throw std::runtime_error("cannot create a seed segment in " + dir.string());
  std::vector<byte_buffer> payloads;
  for (std::size_t i = 0; i < 12; ++i) payloads.emplace_back(1 + i * 5, static_cast<std::uint8_t>('a' + i));
  const std::vector<byte_span> first(payloads.begin(), payloads.begin() + 4), rest(payloads.begin() + 4, payloads.end());
  if (writer.value()->append(first, 1).error || writer.value()->append(rest, 2).error)
    throw std::runtime_error("cannot write the seed segment");
  const byte_buffer file = read_file(writer.value()->path());
  std::filesystem::remove_all(dir);
  if (file.size() <= wab::segment_header_size) throw std::runtime_error("the seed segment has no records");

  out.push_back(file);
  out.emplace_back(file.begin() + wab::segment_header_size, file.end());  // the records alone
  byte_buffer zero_tail = file;
  zero_tail.resize(file.size() + 64, 0);
  out.push_back(zero_tail);
  out.emplace_back(file.begin(), file.end() - 3);  // torn
  byte_buffer flipped(file.begin(), file.end());
  const std::size_t middle = wab::segment_header_size + (file.size() - wab::segment_header_size) / 2;
  flipped.at(middle) = static_cast<std::uint8_t>(file.at(middle) ^ 0x20);
  out.push_back(std::move(flipped));
}

void config_seeds(const std::filesystem::path& source_dir, seed_set& out) {
  const byte_buffer shipped = read_file(source_dir / "config" / "weir.yaml");
  out["config_yaml"].push_back(shipped);
  // Every key the daemon knows, at its default, as --print-config writes it.
  const std::string rendered = render_config(default_config());
  out["config_yaml"].emplace_back(rendered.begin(), rendered.end());

  std::vector<std::string> env, overrides;
  for (const auto& s : settings()) {
    env.push_back(env_name(s.key) + "=" + s.default_yaml);
    overrides.push_back(s.key + "=" + s.default_yaml);
    out["config_env"].push_back(config_env_input({env.back()}, {}));
    out["config_env"].push_back(config_env_input({}, {overrides.back()}));
  }
  out["config_env"].push_back(config_env_input(env, overrides));
}

}  // namespace

seed_set derive_seeds(const seed_sources& sources) {
  seed_set out;
  wire_seeds wire(out);
  wire.file(sources.source_dir / "tests" / "vectors" / "wire_vectors.json");
  if (sources.conformance_dir && std::filesystem::is_directory(*sources.conformance_dir)) {
    std::vector<std::filesystem::path> files;  // sorted: the same seeds in the same order every time
    for (const auto& entry : std::filesystem::directory_iterator(*sources.conformance_dir))
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) wire.file(file);
  }
  wire.finish();
  segment_seeds(sources.scratch_dir, out["segment"]);
  config_seeds(sources.source_dir, out);
  return out;
}

}  // namespace weir::fuzz
