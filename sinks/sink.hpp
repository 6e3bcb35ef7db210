#pragma once
// The Sink interface. A sink receives batches of records and commits each
// batch as a unit where it can; it must be idempotent on the record id, since
// delivery is at-least-once (a crash or a retry can send a record again).
//
// A sink object is used by one thread at a time; the sink runner creates one
// per concurrent commit slot from a sink_factory.
#include <memory>
#include <string>
#include <vector>

#include "wire/sink_record.hpp"

namespace weir {

struct config;

class sink {
 public:
  virtual ~sink() = default;
  virtual commit_result commit(const std::vector<sink_record>& batch) = 0;
  /// A cheap probe (connect, SELECT 1, ...), run on the health interval;
  /// `why` says what failed when it is not healthy.
  virtual sink_health probe(std::string& why) = 0;
};

class sink_factory {
 public:
  virtual ~sink_factory() = default;
  /// A new sink for one commit slot. Throws std::runtime_error when the sink
  /// cannot be set up at all (bad path, bad URL).
  virtual std::unique_ptr<sink> make() = 0;
  virtual std::string type() const = 0;
  /// True when the sink's commits cannot run side by side (SQLite takes one
  /// writer): the runner then gives it one commit slot whatever
  /// sink.concurrency says, since more slots would only queue on the sink's
  /// own lock, each on its own thread.
  virtual bool one_writer() const { return false; }

  /// What reload_secrets did: the keys of secret files read again, and
  /// those that could not be read (with why; the old secret stays in use).
  struct secret_reload {
    std::vector<std::string> reloaded, failed;
  };
  /// Reads the sink's secret files again (SIGHUP); the sinks use the new
  /// value from their next connection or request on. None by default.
  virtual secret_reload reload_secrets() { return {}; }
};

/// The factory for `cfg.sink.type`. Throws std::runtime_error with a one-line
/// reason when the sink's configuration cannot work.
std::shared_ptr<sink_factory> make_sink_factory(const config& cfg);

}  // namespace weir
