#pragma once
// The Sink interface. A sink receives batches of records and commits each
// batch as a unit where it can; it must be idempotent on the record id, since
// delivery is at-least-once (a crash or a retry can send a record again).
//
// A sink object is used by one thread at a time; the sink runner creates one
// per concurrent commit slot from a sink_factory.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "messages/wire/bytes.hpp"

namespace weir {

struct config;

struct sink_record {
  std::string id;        // lowercase hex SHA-256: the AckTracked record id
  std::uint16_t shard = 0;
  std::string segment;   // "shard_NN/seg_SSSSSSSS.wab"
  std::uint64_t index = 0;
  std::int64_t ts_ns = 0;  // ingest time
  byte_buffer payload;
};

/// What became of one commit.
struct commit_result {
  enum class outcome {
    committed,  // every record not listed in `rejected` is stored
    transient,  // nothing may be assumed stored; retry the whole batch later
  };
  outcome kind = outcome::committed;
  std::string error;  // why, for a transient failure (never contains secrets)
  /// Records the sink refused for good (position in the batch, reason); they
  /// go to the dead letters. Only meaningful with `committed`.
  std::vector<std::pair<std::size_t, std::string>> rejected;
  /// The sink asked for this much quiet before the next try (HTTP Retry-After).
  std::optional<std::chrono::milliseconds> retry_after;

  static commit_result ok() { return {}; }
  static commit_result retry(std::string why) { return {outcome::transient, std::move(why), {}, std::nullopt}; }
};

enum class sink_health { healthy, degraded, down };

class sink {
 public:
  virtual ~sink() = default;
  virtual commit_result commit(const std::vector<sink_record>& batch) = 0;
  /// A cheap probe (connect, SELECT 1, ...), run on the health interval.
  virtual sink_health probe() = 0;
};

class sink_factory {
 public:
  virtual ~sink_factory() = default;
  /// A new sink for one commit slot. Throws std::runtime_error when the sink
  /// cannot be set up at all (bad path, bad URL).
  virtual std::unique_ptr<sink> make() = 0;
  virtual std::string type() const = 0;
};

/// The factory for `cfg.sink.type`. Throws std::runtime_error with a one-line
/// reason when the sink's configuration cannot work.
std::shared_ptr<sink_factory> make_sink_factory(const config& cfg);

}  // namespace weir
