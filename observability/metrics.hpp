#pragma once
// Every Prometheus metric weir exports. Counters and histograms the daemon
// updates are resolved once at startup (no family lookup, no lock on the
// per-record path: prometheus-cpp counters are atomics, per-record
// histograms are atomic_histograms); gauges that mirror live state are filled
// in at scrape time from the objects that own that state.
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include "observability/atomic_histogram.hpp"
#include "observability/keep_awake_stats.hpp"
#include "observability/cpu_placement_stats.hpp"
#include "observability/io_spin_stats.hpp"
#include "observability/read_batching_stats.hpp"

namespace weir {

/// Memory shared by many users under a cap, as a scrape reads it (the frame
/// memory of actors/frame_budget.hpp): the owner lives in a higher layer.
class shared_memory_gauge {
 public:
  virtual ~shared_memory_gauge() = default;
  virtual std::uint64_t in_use() const = 0;
  /// Times a user found the memory spent and had to wait.
  virtual std::uint64_t waits() const = 0;
  /// Shares taken back from users that stopped using them.
  virtual std::uint64_t reclaims() const = 0;
};

struct listener_stats;
struct cluster_metrics;
class delivery_status;
struct delivery_status_view;
class dead_letter_store;
namespace wab {
class wab_usage;
}

/// The `tier` label: the durability a push asked for; `none` for frames
/// refused before a tier applies (bad header, bad batch framing).
enum class tier_label : std::uint8_t { buffered, durable, replicated, none };
inline constexpr std::size_t tier_count = 4;

struct tier_metrics {
  prometheus::Counter* accepted = nullptr;  // records taken in for writing
  prometheus::Counter* acked = nullptr;     // records acked
  std::array<prometheus::Counter*, 12> nack{};  // records refused, by Nack reason byte (1..11)
  atomic_histogram ack_latency{latency_buckets()};  // frame decoded -> reply queued
};

struct shard_metrics {
  prometheus::Histogram* fsync_duration = nullptr;
  prometheus::Histogram* group_commit_records = nullptr;
  prometheus::Counter* fsync_failures = nullptr;
  std::atomic<std::uint64_t> appended{0};   // records written this run
  std::atomic<std::uint64_t> lost{0};       // records read past as damage, this run: never to be confirmed
  std::atomic<std::uint64_t> fsyncs{0}, synced_records{0};  // for records per fsync over a window
  std::atomic<std::uint64_t> quarantined_segments{0};  // found damaged while draining, this run
  std::atomic<bool> offline{false};         // no segment can be created: pushes are refused
  std::atomic<bool> writer_up{false};       // the shard's writer actor is running
};

/// How far one sink's drain of one shard is (each sink reads every shard
/// on its own).
struct shard_delivery {
  std::atomic<std::uint64_t> backlog{0};    // records found at startup that this sink had not confirmed
  std::atomic<std::uint64_t> confirmed{0};  // records this sink confirmed this run
  std::atomic<std::uint64_t> lost{0};       // records this sink's drain read past as damage, this run
  std::atomic<std::int64_t> oldest_undelivered_ts_ns{0};  // ingest time of its oldest unconfirmed record; 0: none

  /// Records written (`appended` this run, or found at startup) that the
  /// sink has not confirmed and that are not lost to damage.
  std::uint64_t lag(std::uint64_t appended) const {
    const std::uint64_t in = appended + backlog.load(), out = confirmed.load() + lost.load();
    return in > out ? in - out : 0;
  }
};

/// One sink's delivery: label `sink`.
struct sink_metrics {
  std::string name;
  prometheus::Histogram* commit_duration = nullptr;
  prometheus::Counter* committed = nullptr;      // records through its commits, by outcome
  prometheus::Counter* retried = nullptr;
  prometheus::Counter* dead_lettered = nullptr;
  atomic_histogram delivery_latency{latency_buckets()};  // a record's write -> its commit
  std::vector<std::unique_ptr<shard_delivery>> shards;
};

class metrics {
 public:
  /// `sinks`: their names, in the configured order.
  metrics(std::string data_dir, std::uint16_t shards, std::vector<std::string> sinks = {"default"});
  metrics(const metrics&) = delete;
  metrics& operator=(const metrics&) = delete;

  tier_metrics& tier(tier_label t) { return *tiers_[static_cast<std::size_t>(t)]; }
  shard_metrics& shard(std::uint16_t s) { return *shards_.at(s); }
  std::uint16_t shards() const { return static_cast<std::uint16_t>(shards_.size()); }
  sink_metrics& sink(std::size_t i) { return *sinks_.at(i); }
  std::size_t sinks() const { return sinks_.size(); }
  const std::string& sink_name(std::size_t i) const { return sinks_.at(i)->name; }
  shard_delivery& delivery(std::size_t sink, std::uint16_t shard) { return *sinks_.at(sink)->shards.at(shard); }
  /// Records of `shard` sink `sink` has not confirmed; of every shard.
  std::uint64_t lag(std::size_t sink, std::uint16_t shard) const;
  std::uint64_t lag(std::size_t sink) const;
  /// The sink with the most records not confirmed (the first of equals):
  /// the one that holds the WAB.
  std::size_t furthest_behind() const;
  /// Retiring (SIGUSR1): no pushes are taken; readiness says so.
  void set_retiring() { retiring_.store(true, std::memory_order_relaxed); }
  bool retiring() const { return retiring_.load(std::memory_order_relaxed); }
  /// The records every sink confirmed, of every shard, this run (what the
  /// WAB could let go of: the sink furthest behind's).
  std::uint64_t confirmed_by_all() const;
  void recovered(std::uint64_t records, std::uint64_t quarantined_segments);

  /// What a scrape reads of one sink (in the order of sink(i)).
  struct sink_state {
    std::string type;
    const delivery_status* delivery = nullptr;
    const dead_letter_store* dead_letters = nullptr;
  };
  /// What the scrape reads from the rest of the daemon (any may be null).
  struct live_state {
    const listener_stats* listener = nullptr;
    const wab::wab_usage* usage = nullptr;
    std::vector<sink_state> sinks;
    const shared_memory_gauge* frames = nullptr;
    const cluster_metrics* cluster = nullptr;  // in a cluster only
    const keep_awake_stats* keep_awake = nullptr;  // runtime.keep_awake_us on only
    const cpu_placement_stats* placement = nullptr;  // runtime.cpu_placement adaptive only
    const read_batching_stats* reads = nullptr;       // runtime.read_batching not off
    const io_spin_stats* io_spin = nullptr;           // runtime.buffered_spin_us on only
  };
  /// A shard's segment files, their total size, and its spare files, read
  /// from its directory in one pass.
  struct shard_file_counts {
    std::uint64_t segments = 0, bytes = 0, spares = 0;
  };
  shard_file_counts shard_files(std::uint16_t shard) const;

  /// The Prometheus text exposition; safe from any thread.
  std::string render(const live_state& live);

  /// Seconds since the ingest of the shard's oldest record sink `sink` has
  /// not confirmed (without `sink`: the oldest any sink has not); 0 when none waits.
  double oldest_undelivered_age(std::size_t sink, std::uint16_t shard, std::int64_t now_ns) const;
  double oldest_undelivered_age(std::uint16_t shard, std::int64_t now_ns) const;
  /// Since the last commit that went through, or since the start when none has.
  double seconds_since_last_commit(const delivery_status_view& d, std::int64_t now_ns) const;

 private:
  std::string data_dir_;
  std::int64_t started_ns_;  // wall clock at construction (the daemon's start)
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  std::array<std::unique_ptr<tier_metrics>, tier_count> tiers_;
  std::vector<std::unique_ptr<shard_metrics>> shards_;
  std::vector<std::unique_ptr<sink_metrics>> sinks_;
  std::atomic<bool> retiring_{false};
  prometheus::Counter* recovery_replayed_ = nullptr;
  prometheus::Counter* recovery_quarantined_ = nullptr;
  std::mutex render_mutex_;

  void render_sinks(const std::vector<sink_state>& sinks, std::int64_t now_ns,
                    std::vector<prometheus::MetricFamily>& families) const;
};

/// Lowercase name of a Nack reason byte, as in the `reason` label.
const char* nack_label(std::uint8_t reason);

}  // namespace weir
