#pragma once
// What the drain hands a sink and what a sink answers: a record with its
// identity and ingest time, the outcome of one batch commit, and the sink's
// health. Plain data, shared by the WAB's dead-letter store, the actors and
// every sink.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wire/bytes.hpp"

namespace weir {

struct sink_record {
  std::string id;        // lowercase hex SHA-256: the AckTracked record id
  std::uint16_t node = 0;  // the node that took the record in (0 outside a cluster)
  std::uint16_t shard = 0;
  std::string segment;   // "shard_NN/seg_SSSSSSSS.wab", in a cluster "node_N/shard_NN/seg_SSSSSSSS.wab"
  std::uint64_t sequence = 0;  // SSSSSSSS: the segment's number, never reused in a shard
  std::uint64_t index = 0;
  std::int64_t ts_ns = 0;  // ingest time
  byte_buffer payload;
};

/// What became of one commit.
struct commit_result {
  enum class outcome {
    committed,  // every record not listed in `rejected` is stored
    transient,  // retry later; nothing past the first `settled` records may be assumed stored
  };
  outcome kind = outcome::committed;
  std::string error;  // why, for a transient failure (never contains secrets)
  /// Records the sink refused for good (position in the batch, reason); they
  /// go to the dead letters. With `transient`, only those among the settled.
  std::vector<std::pair<std::size_t, std::string>> rejected;
  /// With `transient`: the first `settled` records are done — stored, or
  /// refused for good and listed in `rejected` — and only the rest need the
  /// next try (a sink that answers record by record, so that an endpoint
  /// failing a few requests in a hundred still gets a large batch through).
  std::size_t settled = 0;
  /// The sink asked for this much quiet before the next try (HTTP Retry-After).
  std::optional<std::chrono::milliseconds> retry_after;
  /// The sink itself answered with this failure (an HTTP status, an error
  /// from a live database connection, a local SQLite or file error), rather
  /// than not being reached: a probe that merely connects says nothing new.
  bool answered = false;

  static commit_result ok() { return {}; }
  static commit_result retry(std::string why, bool answered = false) {
    commit_result r;
    r.kind = outcome::transient;
    r.error = std::move(why);
    r.answered = answered;
    return r;
  }
};

enum class sink_health : std::uint8_t { healthy, degraded, down };

/// Its name in metrics labels and the status report.
inline std::string_view name_of(sink_health h) {
  switch (h) {
    case sink_health::healthy: return "healthy";
    case sink_health::degraded: return "degraded";
    case sink_health::down: return "down";
  }
  return "down";
}

}  // namespace weir
