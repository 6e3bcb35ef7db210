#include "observability/metrics.hpp"

#include "observability/cluster_metrics.hpp"


#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <prometheus/gauge.h>
#include <prometheus/text_serializer.h>

#include "wab/dead_letter_store.hpp"
#include "observability/delivery_status.hpp"
#include "observability/listener_stats.hpp"
#include "wab/segment_format.hpp"
#include "wab/spare_pool.hpp"
#include "wab/wab_usage.hpp"
#include "wab/wall_clock.hpp"

namespace weir {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr std::array<const char*, tier_count> tier_names{"buffered", "durable", "replicated", "none"};
constexpr std::array<std::uint8_t, 10> nack_reasons{1, 2, 3, 4, 5, 6, 7, 8, 9, 11};

MetricFamily family(const char* name, const char* help, MetricType type) {
  MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

ClientMetric value(double v, MetricType type, std::vector<ClientMetric::Label> labels = {}) {
  ClientMetric m;
  m.label = std::move(labels);
  if (type == MetricType::Counter) m.counter.value = v;
  else m.gauge.value = v;
  return m;
}

MetricFamily single(const char* name, const char* help, MetricType type, double v) {
  auto f = family(name, help, type);
  f.metric.push_back(value(v, type));
  return f;
}

double resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE));
}

double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double open_fds() {
  std::error_code ec;
  double n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec))
    ++n;
  return n;
}

}  // namespace

const char* nack_label(std::uint8_t reason) {
  switch (reason) {
    case 1: return "bad_magic";
    case 2: return "version_mismatch";
    case 3: return "bad_header_crc";
    case 4: return "payload_too_large";
    case 5: return "bad_payload_crc";
    case 6: return "internal_error";
    case 7: return "empty_payload";
    case 8: return "unknown_message";
    case 9: return "reserved_flags_set";
    case 11: return "bad_batch_framing";
  }
  return "other";
}

metrics::metrics(std::string data_dir, std::uint16_t shards, std::vector<std::string> sinks)
    : data_dir_(std::move(data_dir)), started_ns_(wab::wall_clock_ns()) {
  auto& accepted = prometheus::BuildCounter().Name("weir_records_accepted_total")
                       .Help("Records taken in for writing to the WAB").Register(*registry_);
  auto& acked = prometheus::BuildCounter().Name("weir_records_ack_total")
                    .Help("Records acked, by the tier they asked for").Register(*registry_);
  auto& nacked = prometheus::BuildCounter().Name("weir_records_nack_total")
                     .Help("Records or frames refused, by tier and Nack reason").Register(*registry_);
  for (std::size_t t = 0; t < tier_count; ++t) {
    tiers_[t] = std::make_unique<tier_metrics>();
    tiers_[t]->accepted = &accepted.Add({{"tier", tier_names[t]}});
    tiers_[t]->acked = &acked.Add({{"tier", tier_names[t]}});
    for (auto r : nack_reasons) tiers_[t]->nack[r] = &nacked.Add({{"tier", tier_names[t]}, {"reason", nack_label(r)}});
  }
  auto& fsync = prometheus::BuildHistogram().Name("weir_wab_fsync_duration_seconds")
                    .Help("Duration of each WAB fdatasync").Register(*registry_);
  auto& group = prometheus::BuildHistogram().Name("weir_wab_group_commit_records")
                    .Help("Durable records released by one fdatasync").Register(*registry_);
  auto& failures = prometheus::BuildCounter().Name("weir_wab_fsync_failures_total")
                       .Help("Failed WAB fdatasyncs (the segment is retired)").Register(*registry_);
  for (std::uint16_t s = 0; s < shards; ++s) {
    auto m = std::make_unique<shard_metrics>();
    const std::string label = std::to_string(s);
    m->fsync_duration = &fsync.Add({{"shard", label}}, prometheus::Histogram::BucketBoundaries{
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1});
    m->group_commit_records = &group.Add({{"shard", label}}, prometheus::Histogram::BucketBoundaries{
        1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096});
    m->fsync_failures = &failures.Add({{"shard", label}});
    shards_.push_back(std::move(m));
  }
  auto& commit = prometheus::BuildHistogram().Name("weir_sink_commit_duration_seconds")
                     .Help("Duration of each sink commit (one batch), by sink").Register(*registry_);
  auto& records = prometheus::BuildCounter().Name("weir_sink_commit_records_total")
                      .Help("Records through sink commits, by sink and outcome").Register(*registry_);
  for (auto& name : sinks) {
    auto k = std::make_unique<sink_metrics>();
    k->commit_duration = &commit.Add({{"sink", name}}, prometheus::Histogram::BucketBoundaries{
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10});
    k->committed = &records.Add({{"sink", name}, {"outcome", "committed"}});
    k->retried = &records.Add({{"sink", name}, {"outcome", "retried"}});
    k->dead_lettered = &records.Add({{"sink", name}, {"outcome", "dead_lettered"}});
    for (std::uint16_t sh = 0; sh < shards; ++sh) k->shards.push_back(std::make_unique<shard_delivery>());
    k->name = std::move(name);
    sinks_.push_back(std::move(k));
  }
  recovery_replayed_ = &prometheus::BuildCounter().Name("weir_recovery_records_replayed_total")
                            .Help("Records found in the WAB by startup recovery").Register(*registry_).Add({});
  recovery_quarantined_ = &prometheus::BuildCounter().Name("weir_recovery_segments_quarantined_total")
                               .Help("Segments startup recovery copied to quarantine").Register(*registry_).Add({});
}

double metrics::oldest_undelivered_age(std::size_t sink, std::uint16_t shard, std::int64_t now_ns) const {
  const std::int64_t ts = sinks_.at(sink)->shards.at(shard)->oldest_undelivered_ts_ns.load();
  return ts > 0 ? std::max(0.0, static_cast<double>(now_ns - ts) / 1e9) : 0.0;
}

double metrics::oldest_undelivered_age(std::uint16_t shard, std::int64_t now_ns) const {
  double oldest = 0;
  for (std::size_t k = 0; k < sinks_.size(); ++k) oldest = std::max(oldest, oldest_undelivered_age(k, shard, now_ns));
  return oldest;
}

std::uint64_t metrics::lag(std::size_t sink, std::uint16_t shard) const {
  return sinks_.at(sink)->shards.at(shard)->lag(shards_.at(shard)->appended.load());
}

std::uint64_t metrics::lag(std::size_t sink) const {
  std::uint64_t sum = 0;
  for (std::uint16_t sh = 0; sh < shards_.size(); ++sh) sum += lag(sink, sh);
  return sum;
}

std::size_t metrics::furthest_behind() const {
  std::size_t furthest = 0;
  for (std::size_t k = 1; k < sinks_.size(); ++k)
    if (lag(k) > lag(furthest)) furthest = k;
  return furthest;
}

std::uint64_t metrics::confirmed_by_all() const {
  std::uint64_t least = 0;
  for (std::size_t k = 0; k < sinks_.size(); ++k) {
    std::uint64_t sum = 0;
    for (const auto& sh : sinks_[k]->shards) sum += sh->confirmed.load();
    least = k == 0 ? sum : std::min(least, sum);
  }
  return least;
}

double metrics::seconds_since_last_commit(const delivery_status::view& d, std::int64_t now_ns) const {
  const std::int64_t last = d.last_commit_unix_ns;
  return std::max(0.0, static_cast<double>(now_ns - (last > 0 ? last : started_ns_)) / 1e9);
}

metrics::shard_file_counts metrics::shard_files(std::uint16_t shard) const {
  std::error_code ec;
  shard_file_counts out;
  const std::string dir = data_dir_ + "/wab/" + wab::shard_dir_name(shard);
  for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (wab::parse_segment_file_name(name)) {
      ++out.segments;
      out.bytes += it->file_size(ec);
    } else if (wab::parse_spare_file_name(name)) {
      ++out.spares;
    }
  }
  return out;
}

void metrics::recovered(std::uint64_t records, std::uint64_t quarantined_segments) {
  recovery_replayed_->Increment(static_cast<double>(records));
  recovery_quarantined_->Increment(static_cast<double>(quarantined_segments));
}

namespace {

/// The cluster's links: who got one, who did not and why (docs/cluster.md).
void render_cluster_links(const cluster_link_stats& l, std::vector<MetricFamily>& families) {
  families.push_back(single("weir_cluster_tls_handshakes_total",
                            "Cluster TLS handshakes, both ways, that verified a node certificate",
                            MetricType::Counter, static_cast<double>(l.handshakes.completed.load())));
  auto failures = family("weir_cluster_tls_handshake_failures_total",
                         "Connections to or from the cluster port refused before they became a link, by reason",
                         MetricType::Counter);
  for (std::size_t i = 0; i < tls_failure_count; ++i)
    failures.metric.push_back(value(static_cast<double>(l.handshakes.failures[i].load()), MetricType::Counter,
                                    {{"reason", name_of(static_cast<tls_failure>(i))}}));
  families.push_back(std::move(failures));
  families.push_back(single("weir_cluster_links", "Authenticated cluster links open", MetricType::Gauge,
                            static_cast<double>(l.open.load())));
  auto cut = family("weir_cluster_links_cut_total", "Cluster links closed for what the peer sent, by reason",
                    MetricType::Counter);
  cut.metric.push_back(value(static_cast<double>(l.cut_too_large.load()), MetricType::Counter, {{"reason", "too_large"}}));
  cut.metric.push_back(value(static_cast<double>(l.cut_forbidden.load()), MetricType::Counter, {{"reason", "forbidden"}}));
  cut.metric.push_back(value(static_cast<double>(l.cut_stranger.load()), MetricType::Counter, {{"reason", "not_member"}}));
  cut.metric.push_back(value(static_cast<double>(l.cut_crowded.load()), MetricType::Counter, {{"reason", "crowded"}}));
  families.push_back(std::move(cut));
  families.push_back(single("weir_cluster_accept_errors_total", "Failed accepts on cluster.listen (EMFILE and the like)",
                            MetricType::Counter, static_cast<double>(l.accept_errors.load())));
}

/// Membership, replication and failover (docs/cluster.md).
void render_cluster(const cluster_metrics& c, std::vector<MetricFamily>& families) {
  const auto now = c.read();
  auto peers = family("weir_cluster_peers", "Cluster peers by state", MetricType::Gauge);
  for (auto state : {peer_state_label::up, peer_state_label::suspect, peer_state_label::down}) {
    double n = 0;
    for (const auto& p : now.peers) n += p.state == state;
    peers.metric.push_back(value(n, MetricType::Gauge, {{"state", name_of(state)}}));
  }
  families.push_back(std::move(peers));
  auto lag = family("weir_replication_lag_bytes", "Bytes of this node's WAB a peer has not synced yet",
                    MetricType::Gauge);
  for (const auto& p : now.peers)
    if (p.node != 0) lag.metric.push_back(value(static_cast<double>(p.lag_bytes), MetricType::Gauge, {{"peer", std::to_string(p.node)}}));
  families.push_back(std::move(lag));
  auto lag_records = family("weir_replication_lag_records", "Records of this node's WAB a peer has not synced yet",
                            MetricType::Gauge);
  for (const auto& p : now.peers)
    if (p.node != 0)
      lag_records.metric.push_back(
          value(static_cast<double>(p.lag_records), MetricType::Gauge, {{"peer", std::to_string(p.node)}}));
  families.push_back(std::move(lag_records));
  auto acks = family("weir_replication_acks_total", "Replicated pushes answered after replication, by outcome",
                     MetricType::Counter);
  acks.metric.push_back(value(static_cast<double>(now.acked), MetricType::Counter, {{"outcome", "acked"}}));
  acks.metric.push_back(value(static_cast<double>(now.refused), MetricType::Counter, {{"outcome", "refused"}}));
  families.push_back(std::move(acks));
  auto failover = family("weir_failover_active", "1 while this node delivers a failed peer's replica", MetricType::Gauge);
  std::set<std::uint16_t> origins(now.failover_known.begin(), now.failover_known.end());
  for (const auto& p : now.peers)
    if (p.node != 0) origins.insert(p.node);
  for (const auto origin : origins) {
    const bool active = std::find(now.failover.begin(), now.failover.end(), origin) != now.failover.end();
    failover.metric.push_back(value(active ? 1 : 0, MetricType::Gauge, {{"origin", std::to_string(origin)}}));
  }
  families.push_back(std::move(failover));
  render_cluster_links(c.links, families);
}

/// listen.tcp's mutual TLS (docs/tls.md).
void add_tls_families(const listener_stats& l, std::vector<MetricFamily>& families) {
  families.push_back(single("weir_tls_handshakes_total", "TLS handshakes on listen.tcp that verified a client certificate",
                            MetricType::Counter, static_cast<double>(l.tls.completed.load())));
  auto failures = family("weir_tls_handshake_failures_total", "TLS handshakes on listen.tcp that failed, by reason",
                         MetricType::Counter);
  for (std::size_t i = 0; i < tls_failure_count; ++i)
    if (static_cast<tls_failure>(i) != tls_failure::wrong_name)  // node names: cluster links only
      failures.metric.push_back(value(static_cast<double>(l.tls.failures[i].load()), MetricType::Counter,
                                      {{"reason", name_of(static_cast<tls_failure>(i))}}));
  families.push_back(std::move(failures));
  auto reloads = family("weir_tls_config_reloads_total", "Reloads of the TLS certificate, key and CA (SIGHUP)",
                        MetricType::Counter);
  reloads.metric.push_back(value(static_cast<double>(l.tls_reloads_ok.load()), MetricType::Counter, {{"outcome", "ok"}}));
  reloads.metric.push_back(
      value(static_cast<double>(l.tls_reloads_failed.load()), MetricType::Counter, {{"outcome", "failed"}}));
  families.push_back(std::move(reloads));
  auto expiry = family("weir_tls_certificate_expiry_timestamp_seconds",
                       "When the certificate in use expires (notAfter, Unix seconds)", MetricType::Gauge);
  expiry.metric.push_back(value(static_cast<double>(l.tls_cert_not_after.load()), MetricType::Gauge, {{"file", "cert"}}));
  expiry.metric.push_back(value(static_cast<double>(l.tls_ca_not_after.load()), MetricType::Gauge, {{"file", "client_ca"}}));
  families.push_back(std::move(expiry));
}

}  // namespace

void metrics::render_sinks(const std::vector<sink_state>& sinks, std::int64_t now_ns,
                           std::vector<MetricFamily>& families) const {
  auto state = family("weir_drain_state", "What delivery to each sink is doing (one-hot)", MetricType::Gauge);
  auto health = family("weir_sink_health", "Each sink's health (one-hot)", MetricType::Gauge);
  auto since = family("weir_sink_seconds_since_last_commit",
                      "Time since a commit to the sink last went through (since the start when none has yet)",
                      MetricType::Gauge);
  auto dead = family("weir_dead_letter_bytes", "Bytes held in each sink's dead-letter directory", MetricType::Gauge);
  auto info = family("weir_sink_info", "The configured sinks", MetricType::Gauge);
  for (std::size_t k = 0; k < sinks.size() && k < sinks_.size(); ++k) {
    const std::string& name = sinks_[k]->name;
    const auto& live = sinks[k];
    if (live.delivery) {
      const auto d = live.delivery->read();
      for (const char* s : {"idle", "delivering", "retrying", "dead_letter_full"})
        state.metric.push_back(value(name_of(d.state) == s ? 1 : 0, MetricType::Gauge, {{"state", s}, {"sink", name}}));
      for (const char* h : {"healthy", "degraded", "down"})
        health.metric.push_back(value(name_of(d.health) == h ? 1 : 0, MetricType::Gauge, {{"state", h}, {"sink", name}}));
      since.metric.push_back(value(seconds_since_last_commit(d, now_ns), MetricType::Gauge, {{"sink", name}}));
    }
    if (live.dead_letters)
      dead.metric.push_back(value(static_cast<double>(live.dead_letters->bytes()), MetricType::Gauge, {{"sink", name}}));
    if (!live.type.empty()) info.metric.push_back(value(1, MetricType::Gauge, {{"sink_type", live.type}, {"sink", name}}));
  }
  for (auto* f : {&state, &health, &since, &dead, &info})
    if (!f->metric.empty()) families.push_back(std::move(*f));
}

std::string metrics::render(const live_state& live) {
  std::lock_guard<std::mutex> guard(render_mutex_);
  auto families = registry_->Collect();

  auto latency = family("weir_ack_latency_seconds", "Time from a push's decoding to its reply, by tier",
                        MetricType::Histogram);
  for (std::size_t t = 0; t < 3; ++t) latency.metric.push_back(tiers_[t]->ack_latency.snapshot({{"tier", tier_names[t]}}));
  families.push_back(std::move(latency));
  auto delivery = family("weir_delivery_latency_seconds", "Time from a record's write to its sink commit",
                         MetricType::Histogram);
  for (const auto& k : sinks_) delivery.metric.push_back(k->delivery_latency.snapshot({{"sink", k->name}}));
  families.push_back(std::move(delivery));

  auto segments = family("weir_wab_segments", "Segment files in each shard's WAB directory", MetricType::Gauge);
  auto spares = family("weir_wab_spare_segments", "Files kept ready for each shard's next segments (wab.spare_segments)",
                       MetricType::Gauge);
  auto lag = family("weir_drain_lag_records", "Records written and not yet confirmed by the sink, by shard and sink",
                    MetricType::Gauge);
  auto oldest = family("weir_delivery_oldest_undelivered_age_seconds",
                       "Age of the oldest record the sink has not confirmed (0: none waiting), by shard and sink",
                       MetricType::Gauge);
  const std::int64_t now_ns = wab::wall_clock_ns();
  auto damaged = family("weir_drain_segments_quarantined_total",
                        "Segments the drain found damaged (sealed ones are checked as they are read) and copied to quarantine",
                        MetricType::Counter);
  auto lost = family("weir_drain_damaged_records_lost_total",
                     "Records the drain read past as damage (they did not check, and are not delivered)",
                     MetricType::Counter);
  for (std::uint16_t s = 0; s < shards(); ++s) {
    const auto& m = *shards_[s];
    const std::string label = std::to_string(s);
    const auto files = shard_files(s);
    segments.metric.push_back(value(static_cast<double>(files.segments), MetricType::Gauge, {{"shard", label}}));
    spares.metric.push_back(value(static_cast<double>(files.spares), MetricType::Gauge, {{"shard", label}}));
    damaged.metric.push_back(value(static_cast<double>(m.quarantined_segments.load()), MetricType::Counter, {{"shard", label}}));
    lost.metric.push_back(value(static_cast<double>(m.lost.load()), MetricType::Counter, {{"shard", label}}));
    for (std::size_t k = 0; k < sinks_.size(); ++k) {
      const std::string& sink = sinks_[k]->name;
      lag.metric.push_back(value(static_cast<double>(this->lag(k, s)), MetricType::Gauge, {{"shard", label}, {"sink", sink}}));
      oldest.metric.push_back(
          value(oldest_undelivered_age(k, s, now_ns), MetricType::Gauge, {{"shard", label}, {"sink", sink}}));
    }
  }
  families.push_back(std::move(segments));
  families.push_back(std::move(spares));
  families.push_back(std::move(lag));
  families.push_back(std::move(oldest));
  families.push_back(std::move(damaged));
  families.push_back(std::move(lost));

  if (live.usage) {
    families.push_back(single("weir_wab_bytes", "Live WAB bytes, all shards (what limits.wab_max_bytes caps)",
                              MetricType::Gauge, static_cast<double>(live.usage->bytes())));
    families.push_back(single("weir_wab_max_bytes", "limits.wab_max_bytes", MetricType::Gauge,
                              static_cast<double>(live.usage->cap())));
    families.push_back(single("weir_wab_cap_rejections_total", "Records refused because the WAB was over its cap",
                              MetricType::Counter, static_cast<double>(live.usage->rejections())));
  }
  if (live.listener) {
    families.push_back(single("weir_connections_active", "Open producer connections", MetricType::Gauge,
                              static_cast<double>(live.listener->active.load())));
    families.push_back(single("weir_connection_idle_timeout_total",
                              "Connections closed because a frame did not arrive whole within listen.read_timeout_ms",
                              MetricType::Counter, static_cast<double>(live.listener->idle_timeouts.load())));
    auto rejected = family("weir_connections_rejected_total", "Connections refused at accept, by reason",
                           MetricType::Counter);
    rejected.metric.push_back(value(static_cast<double>(live.listener->rejected_over_limit.load()),
                                    MetricType::Counter, {{"reason", "over_limit"}}));
    rejected.metric.push_back(value(static_cast<double>(live.listener->rejected_peer_uid.load()),
                                    MetricType::Counter, {{"reason", "peer_uid"}}));
    families.push_back(std::move(rejected));
    families.push_back(single("weir_connections_evicted_total",
                              "Connections closed at listen.max_connections to make room for a new one "
                              "(the one waiting longest on its peer)",
                              MetricType::Counter, static_cast<double>(live.listener->evicted.load())));
    families.push_back(single("weir_accept_errors_total", "Failed accept() calls (out of file descriptors...)",
                              MetricType::Counter, static_cast<double>(live.listener->accept_errors.load())));
    if (live.listener->tls_enabled.load()) add_tls_families(*live.listener, families);
  }
  if (live.frames) {
    families.push_back(single("weir_frame_memory_bytes", "Memory held for large frame payloads, all connections",
                              MetricType::Gauge, static_cast<double>(live.frames->in_use())));
    families.push_back(single("weir_frame_memory_waits_total",
                              "Times a connection waited because limits.frame_memory_bytes was spent",
                              MetricType::Counter, static_cast<double>(live.frames->waits())));
    families.push_back(single("weir_frame_memory_reclaimed_total",
                              "Connections closed to take back frame memory while others waited: their peer had "
                              "stopped filling it (limits.frame_memory_stall_ms) or filled it far too slowly",
                              MetricType::Counter, static_cast<double>(live.frames->reclaims())));
  }
  render_sinks(live.sinks, now_ns, families);
  if (live.cluster) render_cluster(*live.cluster, families);
  if (live.keep_awake) {
    families.push_back(single("weir_keep_awake_spin_seconds_total",
                              "Time the runtime.keep_awake_us spinners spent spinning, all cores together (preempted stretches included; the rest is in process_cpu_seconds_total)",
                              MetricType::Counter, static_cast<double>(live.keep_awake->spun_ns.load()) / 1e9));
    families.push_back(single("weir_keep_awake_rests_total",
                              "Times a keep-awake spinner rested because client bytes arrived too often to be worth spinning for",
                              MetricType::Counter, static_cast<double>(live.keep_awake->rests.load())));
  }
  if (live.placement) {
    families.push_back(single("weir_cpu_placement_gathered",
                              "1 while runtime.cpu_placement has gathered the daemon's threads on one CPU, 0 while they are spread",
                              MetricType::Gauge, live.placement->gathered.load() ? 1.0 : 0.0));
    auto moves = family("weir_cpu_placement_moves_total",
                        "Times runtime.cpu_placement gathered the daemon's threads on one CPU or spread them again",
                        MetricType::Counter);
    moves.metric.push_back(value(static_cast<double>(live.placement->gatherings.load()), MetricType::Counter, {{"to", "gathered"}}));
    moves.metric.push_back(value(static_cast<double>(live.placement->spreads.load()), MetricType::Counter, {{"to", "spread"}}));
    families.push_back(std::move(moves));
  }
  if (live.reads) {
    families.push_back(single("weir_read_batching",
                              "1 while the Unix sockets are read through one level-triggered epoll set (runtime.read_batching), 0 while through Asio's reactor",
                              MetricType::Gauge, live.reads->batching.load() ? 1.0 : 0.0));
    auto switches = family("weir_read_batching_switches_total",
                           "Times runtime.read_batching: adaptive moved the Unix sockets' reads to the epoll set or back to Asio's reactor",
                           MetricType::Counter);
    switches.metric.push_back(value(static_cast<double>(live.reads->to_set.load()), MetricType::Counter, {{"to", "set"}}));
    switches.metric.push_back(value(static_cast<double>(live.reads->to_reactor.load()), MetricType::Counter, {{"to", "reactor"}}));
    families.push_back(std::move(switches));
    families.push_back(single("weir_read_batching_wakeups_total",
                              "Times the epoll set of runtime.read_batching woke an io thread",
                              MetricType::Counter, static_cast<double>(live.reads->wakeups.load())));
    families.push_back(single("weir_read_batching_ready_sockets_total",
                              "Sockets the epoll set reported ready, all wake-ups together (over weir_read_batching_wakeups_total: sockets read per wake-up)",
                              MetricType::Counter, static_cast<double>(live.reads->ready.load())));
  }
  if (live.io_spin) {
    families.push_back(single("weir_io_spin_seconds_total",
                              "Wall time the io thread spent polling its sockets with nothing to run, instead of sleeping, after Buffered acks (runtime.buffered_spin_us); the CPU it took is part of process_cpu_seconds_total",
                              MetricType::Counter, static_cast<double>(live.io_spin->spun_ns.load()) / 1e9));
    auto polls = family("weir_io_spin_polls_total",
                        "Polling windows of runtime.buffered_spin_us by how they ended: caught (something to run came, a client's frame most of the time: no sleep and no wake-up for it) or expired (the last Buffered ack grew older than the window and the io thread went to sleep)",
                        MetricType::Counter);
    polls.metric.push_back(value(static_cast<double>(live.io_spin->caught.load()), MetricType::Counter, {{"outcome", "caught"}}));
    polls.metric.push_back(value(static_cast<double>(live.io_spin->expired.load()), MetricType::Counter, {{"outcome", "expired"}}));
    families.push_back(std::move(polls));
  }
  families.push_back(single("process_resident_memory_bytes", "Resident memory", MetricType::Gauge, resident_bytes()));
  families.push_back(single("process_cpu_seconds_total", "User and system CPU time", MetricType::Counter, cpu_seconds()));
  families.push_back(single("process_open_fds", "Open file descriptors", MetricType::Gauge, open_fds()));

  std::ostringstream out;
  prometheus::TextSerializer{}.Serialize(out, families);
  return out.str();
}

}  // namespace weir
