#include "observability/status_report.hpp"

#include "observability/cluster_metrics.hpp"

#include <nlohmann/json.hpp>

#include "wab/dead_letter_store.hpp"
#include "observability/delivery_status.hpp"
#include "observability/listener_stats.hpp"
#include "observability/version.hpp"
#include "wab/wab_usage.hpp"
#include "wab/wall_clock.hpp"

namespace weir {

namespace {

/// The bucket bound under which a `q` share of the observations fell, in ms.
/// The q-quantile in milliseconds of what was observed between two samples
/// of cumulative bucket counts, interpolated linearly inside its bucket (as
/// Prometheus' histogram_quantile does): a bucket's edge is not a latency.
double quantile_ms(const std::vector<std::uint64_t>& newer, const std::vector<std::uint64_t>& older, double q) {
  if (newer.empty() || older.size() != newer.size()) return 0;
  const double total = static_cast<double>(newer.back() - older.back());
  if (total <= 0) return 0;
  const auto bounds = latency_buckets();
  const double rank = q * total;
  double below = 0;
  for (std::size_t i = 0; i < newer.size() && i < bounds.size(); ++i) {
    const double upto = static_cast<double>(newer[i] - older[i]);
    if (upto >= rank) {
      const double lower = i == 0 ? 0 : bounds[i - 1];
      const double share = upto > below ? (rank - below) / (upto - below) : 1;
      return (lower + (bounds[i] - lower) * share) * 1000;
    }
    below = upto;
  }
  return bounds.back() * 1000;  // in the +Inf bucket: at least the last edge
}

}  // namespace

namespace {

/// Membership, replication and failover, as docs/cluster.md describes them.
nlohmann::json cluster_section(const cluster_metrics& c) {
  const auto now = c.read();
  using nlohmann::json;
  json members = json::array();
  for (const auto& p : now.peers)
    members.push_back({{"node", p.node},
                       {"address", p.address},
                       {"state", name_of(p.state)},
                       {"last_heard_s", p.last_heard_s},
                       {"replication_lag_bytes", p.lag_bytes},
                       {"replication_lag_records", p.lag_records},
                       {"failover", std::find(now.failover.begin(), now.failover.end(), p.node) != now.failover.end()}});
  // Who tried the cluster port and was refused, and links closed for what they sent.
  const auto& l = c.links;
  json refused = json::object();
  for (std::size_t r = 0; r < tls_failure_count; ++r)
    if (const auto n = l.handshakes.failures[r].load()) refused[name_of(static_cast<tls_failure>(r))] = n;
  json cut = json::object();
  for (const auto& [reason, n] : {std::pair{"too_large", l.cut_too_large.load()}, std::pair{"forbidden", l.cut_forbidden.load()},
                                  std::pair{"not_member", l.cut_stranger.load()}, std::pair{"crowded", l.cut_crowded.load()}})
    if (n) cut[reason] = n;
  return {{"enabled", true},
          {"node", now.node},
          {"replicas", now.replicas},
          {"members", members},
          {"replicated_acked", now.acked},
          {"replicated_refused", now.refused},
          {"failover_origins", now.failover},
          {"links", {{"open", l.open.load()}, {"handshakes_refused", refused}, {"cut", cut}}}};
}

}  // namespace

status_report::status_report(metrics& stats, metrics::live_state live) : stats_(stats), live_(std::move(live)) {
  sample();
}

status_report::totals status_report::now() const {
  totals t;
  t.at = std::chrono::steady_clock::now();
  for (auto tl : {tier_label::buffered, tier_label::durable, tier_label::replicated}) {
    t.accepted += stats_.tier(tl).accepted->Value();
    t.acked += stats_.tier(tl).acked->Value();
  }
  t.delivered = static_cast<double>(stats_.confirmed_by_all());
  for (std::uint16_t s = 0; s < stats_.shards(); ++s) {
    t.fsyncs += static_cast<double>(stats_.shard(s).fsyncs.load());
    t.synced += static_cast<double>(stats_.shard(s).synced_records.load());
  }
  for (auto tl : {tier_label::buffered, tier_label::durable, tier_label::replicated}) {
    const auto snap = stats_.tier(tl).ack_latency.snapshot({});
    if (t.latency.empty()) t.latency.assign(snap.histogram.bucket.size(), 0);
    for (std::size_t i = 0; i < snap.histogram.bucket.size(); ++i) t.latency[i] += snap.histogram.bucket[i].cumulative_count;
  }
  return t;
}

void status_report::sample() {
  auto t = now();
  std::lock_guard<std::mutex> guard(mutex_);
  if (!samples_.empty()) {
    history_.push_back(point_between(samples_.back(), t));
    while (history_.size() > history_points) history_.pop_front();
  }
  samples_.push_back(std::move(t));
  while (samples_.size() > 61) samples_.pop_front();
}

status_report::history_point status_report::point_between(const totals& older, const totals& newer) const {
  history_point p;
  p.unix_s = wab::wall_clock_ns() / 1'000'000'000;
  const double dt = std::chrono::duration<double>(newer.at - older.at).count();
  if (dt > 0) {
    p.ingest = (newer.accepted - older.accepted) / dt;
    p.acked = (newer.acked - older.acked) / dt;
    p.delivered = (newer.delivered - older.delivered) / dt;
  }
  const double fsyncs = newer.fsyncs - older.fsyncs;
  p.per_fsync = fsyncs > 0 ? (newer.synced - older.synced) / fsyncs : 0;
  p.p50_ms = quantile_ms(newer.latency, older.latency, 0.5);
  p.p99_ms = quantile_ms(newer.latency, older.latency, 0.99);
  if (live_.usage) p.wab_bytes = static_cast<double>(live_.usage->bytes());
  const std::int64_t now_ns = wab::wall_clock_ns();
  p.lag = static_cast<double>(stats_.lag(stats_.furthest_behind()));
  for (std::uint16_t s = 0; s < stats_.shards(); ++s)
    p.oldest_age_s = std::max(p.oldest_age_s, stats_.oldest_undelivered_age(s, now_ns));
  return p;
}

std::string status_report::history_json() const {
  using nlohmann::json;
  json t = json::array(), ingest = json::array(), acked = json::array(), delivered = json::array(),
       p50 = json::array(), p99 = json::array(), per_fsync = json::array(), wab = json::array(), lag = json::array(),
       oldest = json::array();
  {
    std::lock_guard<std::mutex> guard(mutex_);
    for (const auto& p : history_) {
      t.push_back(p.unix_s);
      ingest.push_back(p.ingest);
      acked.push_back(p.acked);
      delivered.push_back(p.delivered);
      p50.push_back(p.p50_ms);
      p99.push_back(p.p99_ms);
      per_fsync.push_back(p.per_fsync);
      wab.push_back(p.wab_bytes);
      lag.push_back(p.lag);
      oldest.push_back(p.oldest_age_s);
    }
  }
  return json{{"interval_s", 1},     {"t", t},           {"ingest", ingest},       {"acked", acked},
              {"delivered", delivered}, {"p50_ms", p50}, {"p99_ms", p99},          {"per_fsync", per_fsync},
              {"wab_bytes", wab},     {"lag", lag},       {"oldest_age_s", oldest}}
      .dump();
}

std::optional<std::string> status_report::not_ready() const {
  if (stats_.retiring()) {
    const std::uint64_t left = stats_.lag(stats_.furthest_behind());
    return "retiring: no pushes are taken; delivering the " + std::to_string(left) + " records left, then stopping";
  }
  for (std::uint16_t s = 0; s < stats_.shards(); ++s) {
    if (!stats_.shard(s).writer_up.load()) return "the writer of WAB shard " + std::to_string(s) + " is not running";
    if (stats_.shard(s).offline.load()) return "WAB shard " + std::to_string(s) + " cannot create a segment";
  }
  if (live_.usage && live_.usage->over_cap())
    return "the WAB is over limits.wab_max_bytes (" + std::to_string(live_.usage->bytes()) + " bytes), held for " +
           holding_sink();
  return std::nullopt;
}

std::string status_report::holding_sink() const { return sink_holding_wab(stats_, live_.sinks); }

std::string sink_holding_wab(const metrics& stats, const std::vector<metrics::sink_state>& sinks) {
  const std::size_t furthest = stats.furthest_behind();
  std::string said = "sink " + stats.sink_name(furthest) + " (" + std::to_string(stats.lag(furthest)) +
                     " records it has not confirmed";
  if (furthest < sinks.size() && sinks[furthest].delivery) {
    const auto d = sinks[furthest].delivery->read();
    said += std::string(", ") + std::string(name_of(d.health));
    if (!d.last_error.empty()) said += ": " + d.last_error;
  }
  return said + ")";
}

std::optional<std::string> status_report::delivery_problem() const {
  // Retrying now, or between two attempts (the state says delivering while
  // one runs): the sink's health says it has been failing.
  std::string problems;
  for (std::size_t k = 0; k < live_.sinks.size(); ++k) {
    if (!live_.sinks[k].delivery) continue;
    auto d = live_.sinks[k].delivery->read();
    if ((d.state != delivery_state::retrying && d.health == sink_health::healthy) || d.last_error.empty()) continue;
    if (!problems.empty()) problems += "; ";
    if (live_.sinks.size() > 1 && k < stats_.sinks()) problems += "sink " + stats_.sink_name(k) + ": ";
    problems += d.last_error;
  }
  return problems.empty() ? std::nullopt : std::optional<std::string>(std::move(problems));
}

nlohmann::json status_report::sinks_json(std::int64_t now_ns) const {
  using nlohmann::json;
  json out = json::array();
  for (std::size_t k = 0; k < live_.sinks.size() && k < stats_.sinks(); ++k) {
    const auto& live = live_.sinks[k];
    double oldest = 0;
    for (std::uint16_t s = 0; s < stats_.shards(); ++s) oldest = std::max(oldest, stats_.oldest_undelivered_age(k, s, now_ns));
    json one = {{"name", stats_.sink_name(k)},
                {"type", live.type},
                {"lag_records", stats_.lag(k)},
                {"oldest_undelivered_age_s", oldest}};
    if (live.delivery) {
      const auto d = live.delivery->read();
      one["state"] = std::string(name_of(d.state));
      one["health"] = std::string(name_of(d.health));
      one["committed_records"] = d.committed_records;
      one["dead_lettered"] = d.dead_lettered;
      one["retries"] = d.retries;
      one["backoff_ms"] = d.backoff_ms;
      one["last_error"] = d.last_error;
      one["seconds_since_last_commit"] = stats_.seconds_since_last_commit(d, now_ns);
      one["committed_yet"] = d.last_commit_unix_ns > 0;
    }
    if (live.dead_letters) one["dead_letter_bytes"] = live.dead_letters->bytes();
    out.push_back(std::move(one));
  }
  return out;
}

std::string status_report::json() const {
  using nlohmann::json;
  const totals current = now();
  json rates = json::object(), per_fsync = json::object(), latency = json::object();
  {
    std::lock_guard<std::mutex> guard(mutex_);
    for (int window : {1, 10, 60}) {
      // The newest sample at least `window` seconds old (or the oldest there is).
      const totals* then = samples_.empty() ? nullptr : &samples_.front();
      for (auto it = samples_.rbegin(); it != samples_.rend(); ++it)
        if (current.at - it->at >= std::chrono::seconds(window)) {
          then = &*it;
          break;
        }
      const std::string key = std::to_string(window) + "s";
      const double dt = then ? std::chrono::duration<double>(current.at - then->at).count() : 0;
      auto rate = [&](double a, double b) { return dt > 0 ? (a - b) / dt : 0.0; };
      rates["ingest"][key] = then ? rate(current.accepted, then->accepted) : 0.0;
      rates["acked"][key] = then ? rate(current.acked, then->acked) : 0.0;
      rates["delivered"][key] = then ? rate(current.delivered, then->delivered) : 0.0;
      const double fsyncs = then ? current.fsyncs - then->fsyncs : 0;
      per_fsync[key] = fsyncs > 0 ? (current.synced - then->synced) / fsyncs : 0.0;
      latency[key] = {{"p50", then ? quantile_ms(current.latency, then->latency, 0.5) : 0.0},
                      {"p99", then ? quantile_ms(current.latency, then->latency, 0.99) : 0.0}};
    }
  }
  json shards = json::array();
  const std::int64_t now_ns = wab::wall_clock_ns();
  double oldest_age = 0;
  for (std::uint16_t s = 0; s < stats_.shards(); ++s) {
    const double age = stats_.oldest_undelivered_age(s, now_ns);
    oldest_age = std::max(oldest_age, age);
    const auto& m = stats_.shard(s);
    // Every sink's: the confirmed and lag of the one furthest behind.
    std::uint64_t confirmed = 0, lag = 0;
    for (std::size_t k = 0; k < stats_.sinks(); ++k) {
      const auto c = stats_.delivery(k, s).confirmed.load();
      confirmed = k == 0 ? c : std::min(confirmed, c);
      lag = std::max(lag, stats_.lag(k, s));
    }
    const auto appended = m.appended.load();
    const auto files = stats_.shard_files(s);
    shards.push_back({{"shard", s},
                      {"segments", files.segments},
                      {"bytes", files.bytes},
                      {"appended", appended},
                      {"confirmed", confirmed},
                      {"lag_records", lag},
                      {"damaged_records_lost", m.lost.load()},
                      {"oldest_undelivered_age_s", age},
                      {"offline", m.offline.load()}});
  }
  const auto reason = not_ready();
  json j = {{"version", std::string(version_string)},
            {"uptime_s", std::chrono::duration<double>(current.at - started_).count()},
            {"time_unix_s", static_cast<double>(now_ns) / 1e9},
            {"ready", !reason},
            {"not_ready_reason", reason ? *reason : ""},
            {"shards", shards},
            {"rates", rates},
            {"ack_latency_ms", latency},
            {"records_per_fsync", per_fsync},
            {"cluster", {{"members", json::array()}, {"enabled", false}}}};
  if (live_.listener)
    j["connections"] = {{"active", live_.listener->active.load()}, {"accepted", live_.listener->accepted.load()}};
  if (live_.usage)
    j["wab"] = {{"bytes", live_.usage->bytes()},
                {"max_bytes", live_.usage->cap()},
                {"over_cap", live_.usage->over_cap()},
                {"cap_rejections", live_.usage->rejections()}};
  j["sinks"] = sinks_json(now_ns);
  // The first sink's, as before there were several.
  if (!live_.sinks.empty() && live_.sinks[0].delivery) {
    const auto d = live_.sinks[0].delivery->read();
    double first_oldest = 0;
    for (std::uint16_t s = 0; s < stats_.shards(); ++s)
      first_oldest = std::max(first_oldest, stats_.oldest_undelivered_age(0, s, now_ns));
    j["drain"] = {{"state", std::string(name_of(d.state))},
                  {"backoff_ms", d.backoff_ms},
                  {"oldest_undelivered_age_s", first_oldest},
                  {"retries", d.retries},
                  {"last_error", d.last_error}};
    j["sink"] = {{"type", live_.sinks[0].type},
                 {"health", name_of(d.health)},
                 {"committed_records", d.committed_records},
                 {"seconds_since_last_commit", stats_.seconds_since_last_commit(d, now_ns)},
                 {"dead_lettered", d.dead_lettered}};
  }
  if (!live_.sinks.empty() && live_.sinks[0].dead_letters)
    j["dead_letter_bytes"] = live_.sinks[0].dead_letters->bytes();
  if (live_.cluster) j["cluster"] = cluster_section(*live_.cluster);
  if (live_.reads)
    j["read_batching"] = {{"batching", live_.reads->batching.load()},
                          {"to_set", live_.reads->to_set.load()},
                          {"to_reactor", live_.reads->to_reactor.load()},
                          {"wakeups", live_.reads->wakeups.load()},
                          {"ready_sockets", live_.reads->ready.load()}};
  if (live_.io_spin)
    j["buffered_spin"] = {{"spun_seconds", static_cast<double>(live_.io_spin->spun_ns.load()) / 1e9},
                          {"caught", live_.io_spin->caught.load()},
                          {"expired", live_.io_spin->expired.load()}};
  if (live_.placement)
    j["cpu_placement"] = {{"gathered", live_.placement->gathered.load()},
                          {"gather_cpu", live_.placement->gather_cpu},
                          {"gatherings", live_.placement->gatherings.load()},
                          {"spreads", live_.placement->spreads.load()}};
  return j.dump();
}

}  // namespace weir
