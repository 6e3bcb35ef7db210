#include "sim/durable_view.hpp"

#include <filesystem>

#include "wab/dead_letter_store.hpp"
#include "wab/segment_format.hpp"
#include "wab/segment_reader.hpp"

namespace weir::sim {

std::vector<std::string> segment_payloads(const byte_buffer& bytes) {
  std::vector<std::string> out;
  const auto header = wab::decode_segment_header(byte_span(bytes.data(), std::min(bytes.size(), wab::segment_prefix_size)));
  if (!header) return out;
  const std::uint32_t seed = header.value().crc_seed();
  const auto end = static_cast<std::size_t>(wab::records_end(header.value(), bytes.size()));
  std::size_t at = static_cast<std::size_t>(header.value().data_start());
  while (at + wab::record_header_size <= end) {
    const std::uint32_t len = load_le32(bytes.data() + at);
    const std::uint32_t crc = load_le32(bytes.data() + at + 4);
    const auto ts = static_cast<std::int64_t>(load_le64(bytes.data() + at + 8));
    if (len == 0 || at + wab::record_header_size + len > end) break;
    const byte_span payload(bytes.data() + at + wab::record_header_size, len);
    if (wab::record_crc(seed, ts, payload) != crc) break;
    out.emplace_back(payload.begin(), payload.end());
    at += wab::record_header_size + len;
  }
  return out;
}

const std::vector<std::string>& durable_view::parsed(const sim_file_io::durable_file& f) {
  const auto key = std::make_pair(f.node, f.version);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  // Older versions of the same file are of no further use.
  for (auto old = cache_.lower_bound({f.node, 0}); old != cache_.end() && old->first.first == f.node;)
    old = cache_.erase(old);
  return cache_.emplace(key, segment_payloads(*f.bytes)).first->second;
}

const durable_view::record_map& durable_view::shard_records(const std::string& shard_dir) {
  auto& c = shards_[shard_dir];
  if (c.generation != io_.durable_generation()) {
    c.value = read_shard(shard_dir);
    c.generation = io_.durable_generation();
  }
  return c.value;
}

const durable_view::letter_set& durable_view::dead_letters(const std::string& dead_letter_dir) {
  auto& c = letters_[dead_letter_dir];
  if (c.generation != io_.durable_generation()) {
    c.value = read_dead_letters(dead_letter_dir);
    c.generation = io_.durable_generation();
  }
  return c.value;
}

durable_view::record_map durable_view::read_shard(const std::string& shard_dir) {
  record_map out;
  const std::string shard = std::filesystem::path(shard_dir).filename().string();
  for (const auto& f : io_.durable_files(shard_dir)) {
    if (!wab::parse_segment_file_name(f.name)) continue;
    const auto& payloads = parsed(f);
    for (std::size_t i = 0; i < payloads.size(); ++i) out[payloads[i]] = {shard + "/" + f.name, i + 1};
  }
  return out;
}

durable_view::letter_set durable_view::read_dead_letters(const std::string& dead_letter_dir) {
  letter_set out;
  for (const auto& f : io_.durable_files(dead_letter_dir)) {
    if (!dead_letter_sequence(f.name)) continue;
    for (const auto& envelope : parsed(f)) {
      auto letter = dead_letter_store::decode_envelope(
          byte_span(reinterpret_cast<const std::uint8_t*>(envelope.data()), envelope.size()));
      if (letter) out[std::string(letter->payload.begin(), letter->payload.end())] = true;
    }
  }
  return out;
}

}  // namespace weir::sim
