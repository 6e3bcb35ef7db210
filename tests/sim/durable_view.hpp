#pragma once
// What a crash right now would leave, read as records: the payloads in each
// shard's durable segment files and in the durable dead-letter files. Parses
// are cached per (file, durable version), so checking after every step
// costs only the files whose durable bytes changed.
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/sim_file_io.hpp"

namespace weir::sim {

struct durable_record {
  std::string segment;  // "shard_NN/seg_SSSSSSSS.wab"
  std::uint64_t index = 0;
};

/// The payloads of one segment image, in order, up to the first record that
/// does not check. A Durable ack never follows damage in its own segment (a
/// failed sync or write retires the segment), so a sequential read suffices.
std::vector<std::string> segment_payloads(const byte_buffer& bytes);

class durable_view {
 public:
  explicit durable_view(const sim_file_io& io) : io_(io) {}

  using record_map = std::unordered_map<std::string, durable_record>;
  using letter_set = std::unordered_map<std::string, bool>;

  /// payload -> where it lies, over every durable segment of `shard_dir`.
  const record_map& shard_records(const std::string& shard_dir);
  /// The original payloads of every durable dead letter in `dead_letter_dir`.
  const letter_set& dead_letters(const std::string& dead_letter_dir);

 private:
  const std::vector<std::string>& parsed(const sim_file_io::durable_file& f);
  record_map read_shard(const std::string& shard_dir);
  letter_set read_dead_letters(const std::string& dead_letter_dir);

  template <class T>
  struct cached {
    std::uint64_t generation = ~0ull;
    T value;
  };
  std::map<std::string, cached<record_map>> shards_;
  std::map<std::string, cached<letter_set>> letters_;

  const sim_file_io& io_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<std::string>> cache_;  // (node, version)
};

}  // namespace weir::sim
