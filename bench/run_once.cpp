#include "bench/run_once.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "bench/baselines.hpp"
#include "bench/cluster_runner.hpp"
#include "bench/daemon_counters.hpp"
#include "bench/daemon_runner.hpp"
#include "bench/http_baselines.hpp"
#include "bench/http_endpoint.hpp"
#include "bench/load_driver.hpp"
#include "bench/minimal_server.hpp"
#include "bench/mysql_baselines.hpp"
#include "bench/clickhouse_baselines.hpp"
#include "bench/postgres_baselines.hpp"
#include "bench/redis_baselines.hpp"
#include "bench/watchdog.hpp"
#include "wab/segment_format.hpp"
#include "wab/segment_reader.hpp"

namespace weir::bench {

namespace {

using clock = std::chrono::steady_clock;

std::uint64_t records_per_frame(const load_spec& spec) { return spec.batch == 0 ? 1 : spec.batch; }


sample from_load(load_result& load, double seconds) {
  sample s;
  s.records = load.records;
  s.refused = load.refused;
  s.records_per_s = static_cast<double>(load.records) / seconds;
  s.p50_us = quantile(load.latency_us, 0.5);
  s.p99_us = quantile(load.latency_us, 0.99);
  s.p999_us = quantile(load.latency_us, 0.999);
  return s;
}

/// The scenario's load for its warm-up time, results dropped.
void warm_up(const std::string& socket_path, load_spec spec) {
  if (spec.warmup_seconds <= 0) return;
  spec.seconds = spec.warmup_seconds;
  spec.max_records = 0;
  run_load(socket_path, spec);
}

/// Bytes of records in every segment under `wab_dir` (where each segment's
/// records end; spare files and a preallocated segment's unwritten rest are
/// not backlog).
std::uint64_t wab_bytes(const std::string& wab_dir) {
  auto io = wab::default_file_io();
  std::uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(wab_dir, ec))
    if (e.is_regular_file(ec) && wab::parse_segment_file_name(e.path().filename().string()))
      if (const auto extent = wab::read_segment_extent(*io, e.path().string())) total += extent.value().end;
  return total;
}

/// The daemon's counters once its sink committed every record it acked, or
/// at `deadline` if that comes first.
daemon_counters delivered_counters(daemon_runner& daemon, clock::time_point deadline) {
  for (;;) {
    auto c = read_daemon_counters(daemon.admin_address());
    if (c.committed_records >= c.acked_records || clock::now() >= deadline) return c;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

/// Waits until `arrived()`, polling; throws past `limit` after `since`.
template <typename F>
void wait_until(F&& arrived, clock::time_point since, const char* what,
                std::chrono::seconds limit = std::chrono::minutes(5)) {
  while (!arrived()) {
    if (clock::now() - since > limit) throw std::runtime_error(what);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

/// The endpoint of a scenario whose sink POSTs to weir-bench's own.
std::unique_ptr<http_endpoint> own_endpoint(const scenario& sc) {
  if (!sc.own_endpoint) return nullptr;
  return std::make_unique<http_endpoint>(
      std::chrono::microseconds(static_cast<std::int64_t>(sc.endpoint_delay_ms * 1000)), sc.endpoint_no_delay);
}

/// Samples a sustained run every `every` until stopped: what the daemon
/// acked, how long its fdatasyncs took, how much memory it holds.
class sampler {
 public:
  sampler(const daemon_runner& daemon, double every, double planned_s)
      : daemon_(daemon), every_(every), planned_s_(planned_s) {
    thread_ = std::thread([this] { loop(); });
  }
  ~sampler() {
    try {
      stop();
    } catch (...) {
    }
  }
  /// The samples; rethrows what stopped the sampling early (the daemon
  /// did not answer its /metrics).
  std::vector<series_point> stop() {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (failure_) std::rethrow_exception(failure_);
    return points_;
  }

 private:
  void loop() {
    try {
      sample_until_stopped();
    } catch (...) {
      failure_ = std::current_exception();
    }
  }

  void sample_until_stopped() {
    const auto start = clock::now();
    auto last = read_daemon_counters(daemon_.admin_address());
    auto last_at = start;
    for (int n = 1;; ++n) {
      std::unique_lock<std::mutex> lock(mutex_);
      const auto due = start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(every_ * n));
      if (wake_.wait_until(lock, due, [&] { return stopping_; })) return;
      lock.unlock();
      const auto now_counts = read_daemon_counters(daemon_.admin_address());
      const auto now = clock::now();
      const double span = std::chrono::duration<double>(now - last_at).count();
      series_point p;
      p.t_s = std::chrono::duration<double>(now - start).count();
      p.records_per_s = (now_counts.acked_records - last.acked_records) / span;
      p.fsync_ms = 1000 * per(now_counts.fsync_seconds - last.fsync_seconds, now_counts.fsync_count - last.fsync_count);
      p.rss_mib = daemon_.rss_mib();
      points_.push_back(p);
      // A long run says how it goes as it goes.
      std::fprintf(stderr, "weir-bench: %.0f of %.0f s: %.0f records/s, fdatasync %.2f ms, RSS %.1f MiB\n", p.t_s,
                   planned_s_, p.records_per_s, p.fsync_ms, p.rss_mib);
      last = now_counts;
      last_at = now;
    }
  }

  const daemon_runner& daemon_;
  double every_, planned_s_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<series_point> points_;
  std::exception_ptr failure_;
  std::thread thread_;
};

/// `settings` with a sink that refuses every commit (a plain HTTP sink on a
/// loopback port nobody listens on): the load's records stay in the WAB.
std::map<std::string, std::string> sink_down(std::map<std::string, std::string> settings) {
  std::erase_if(settings, [](const auto& kv) { return kv.first.rfind("sink.http.", 0) == 0; });  // TLS keys too
  settings["sink.type"] = "http";
  settings["sink.http.url"] = "http://127.0.0.1:" + std::to_string(unused_loopback_port()) + "/";
  return settings;
}

sample startup_round(const scenario& sc, const load_spec& spec, const std::string& dir,
                     const std::string& server_binary) {
  daemon_runner daemon(server_binary, dir, sc.daemon_settings);
  sample s;
  s.startup_s = daemon.startup_seconds();
  note_step("idle");
  std::this_thread::sleep_for(std::chrono::duration<double>(spec.seconds));
  s.idle_rss_mib = daemon.rss_mib();
  daemon.stop();
  return s;
}

/// The backlog the load left (the scenario's sink cannot take it), a
/// crash, and a restart on it.
sample recovery_round(const scenario& sc, load_result& load, daemon_runner& daemon, const std::string& dir,
                      const std::string& server_binary) {
  daemon.kill_hard();
  auto s = from_load(load, load.seconds);
  daemon_runner restarted(server_binary, dir, sc.daemon_settings);
  s.startup_s = restarted.startup_seconds();
  restarted.stop();
  // Counted once recovery has sealed the segments the crash left open.
  s.backlog_bytes = wab_bytes(dir + "/var/wab");
  return s;
}

}  // namespace

double round_ratio(const scenario& sc, const sample& run, const sample& base) {
  if (sc.measure == measure_kind::latency)
    return run.delivery_p50_us > 0 ? base.p50_us / run.delivery_p50_us : 0;
  return base.records_per_s > 0 ? run.records_per_s / base.records_per_s : 0;
}

sample run_scenario_once(const scenario& sc, const load_spec& spec, const std::string& dir,
                         const std::string& server_binary, const std::string& socket) {
  if (sc.measure == measure_kind::startup) return startup_round(sc, spec, dir, server_binary);
  // A delivery round counts its own rows: the table starts empty.
  if (sc.sinks_to_postgres() && socket.empty()) postgres_reset(sc.postgres, sc.sink_table());
  if (sc.sinks_to_mysql() && socket.empty()) mysql_reset(sc.mysql);
  if (sc.sinks_to_clickhouse() && socket.empty()) clickhouse_reset(sc.clickhouse, sc.sink_table());
  auto endpoint = own_endpoint(sc);
  auto settings = sc.daemon_settings;
  if (endpoint) settings["sink.http.url"] = endpoint->url();
  std::unique_ptr<daemon_runner> single;
  std::unique_ptr<cluster_runner> cluster;
  if (socket.empty() && sc.cluster_nodes > 0)
    cluster = std::make_unique<cluster_runner>(server_binary, dir, settings, sc.cluster_nodes, sc.cluster_replicas);
  else if (socket.empty())
    single = std::make_unique<daemon_runner>(server_binary, dir,
                                             sc.measure == measure_kind::backlog ? sink_down(settings) : settings);
  daemon_runner* daemon = cluster ? &cluster->first() : single.get();
  if (!daemon && sc.measure != measure_kind::ingest)
    throw std::runtime_error(std::string("measure: ") + name_of(sc.measure) +
                             " needs the daemon weir-bench starts (no --socket)");
  const std::string target = daemon ? daemon->socket_path() : socket;
  // Delivery, recovery, outage and latency measure from the first push: no warm-up there.
  note_step("warming up");
  if (sc.measure == measure_kind::ingest || sc.measure == measure_kind::sustained) warm_up(target, spec);
  note_step("reading the daemon's counters before the load");
  // After a warm-up, once its records are delivered: the load's CPU time
  // then counts neither the warm-up's delivery nor less than its own.
  const bool warmed =
      (sc.measure == measure_kind::ingest || sc.measure == measure_kind::sustained) && spec.warmup_seconds > 0;
  const daemon_counters before = !daemon ? daemon_counters{}
                                 : warmed ? delivered_counters(*daemon, clock::now() + std::chrono::seconds(10))
                                          : read_daemon_counters(daemon->admin_address());
  const double db_commits_before = sc.sinks_to_postgres() ? postgres_commits(sc.postgres) : 0;
  std::optional<sampler> samples;
  if (sc.measure == measure_kind::sustained) samples.emplace(*daemon, sc.sample_seconds, spec.seconds);
  if (sc.measure == measure_kind::outage && sc.outage_seconds > 0)
    endpoint->refuse_for(std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(sc.outage_seconds)));
  const auto started = clock::now();
  note_step("driving the load");
  auto load = run_load(target, spec);
  note_step("after the load");
  if (sc.measure == measure_kind::ingest || sc.measure == measure_kind::sustained) {
    auto s = from_load(load, load.seconds);
    if (samples) {
      s.series = samples->stop();
      for (const auto& p : s.series) s.peak_rss_mib = std::max(s.peak_rss_mib, p.rss_mib);
    }
    if (daemon) {
      const auto after = read_daemon_counters(daemon->admin_address());
      s.records_per_fsync = per(after.synced_records - before.synced_records, after.fsyncs - before.fsyncs);
      // A drain that lags would leave part of the records' cost out.
      note_step("waiting for the sink to take what was acked");
      const auto delivered = delivered_counters(*daemon, clock::now() + std::chrono::seconds(10));
      s.daemon_cpu_us_per_record =
          per((delivered.cpu_seconds - before.cpu_seconds) * 1e6, static_cast<double>(load.records));
      if (cluster) cluster->stop();
      else daemon->stop();
    }
    return s;
  }
  if (sc.measure == measure_kind::recovery) return recovery_round(sc, load, *daemon, dir, server_binary);
  auto load_ended = clock::now();
  auto delivery_started = started;
  double loaded_per_fsync = 0;  // a backlog's: the daemon that took the load synced it
  if (sc.measure == measure_kind::backlog) {
    const auto loaded = read_daemon_counters(daemon->admin_address());
    if (loaded.committed_records > before.committed_records)
      throw std::runtime_error("backlog: the daemon that took the load delivered records; the backlog was not held");
    loaded_per_fsync = per(loaded.synced_records - before.synced_records, loaded.fsyncs - before.fsyncs);
    // The backlog is on disk; delivery starts with the daemon that can reach the sink.
    single->stop();
    delivery_started = load_ended = clock::now();
    single = std::make_unique<daemon_runner>(server_binary, dir, settings);
    daemon = single.get();
  }
  if (sc.measure == measure_kind::latency) {
    wait_until([&] { return endpoint->accepted() >= load.records; }, load_ended,
               "the endpoint did not receive every acked record within 5 minutes");
    daemon->stop();
    auto s = from_load(load, load.seconds);
    auto delivered = endpoint->stamped_latencies_us();
    s.delivery_p50_us = quantile(delivered, 0.5);
    s.delivery_p99_us = quantile(delivered, 0.99);
    return s;
  }
  // Delivery and outage: the daemon's count of committed records says when
  // to look; the sink's own rows confirm it. Counting rows all along would
  // load the database under test (a full scan every poll).
  const std::string db = dir + "/var/sink.db";
  int own_postgres_queries = 0;  // each is a transaction pg_stat_database counts
  auto sink_rows = [&] {
    if (sc.sinks_to_postgres()) {
      ++own_postgres_queries;
      return postgres_row_count(sc.postgres, sc.sink_table());
    }
    if (sc.sinks_to_mysql()) return mysql_row_count(sc.mysql);
    if (sc.sinks_to_clickhouse()) return clickhouse_row_count(sc.clickhouse, sc.sink_table());
    return sqlite_row_count(db);
  };
  daemon_counters counts;
  wait_until(
      [&] {
        counts = read_daemon_counters(daemon->admin_address());
        // Every sink commits every record (the counter sums the sinks).
        return counts.committed_records >= static_cast<double>(load.records * sc.sink_count());
      },
      load_ended, "the sinks did not receive every acked record within 5 minutes");
  const auto committed_at = clock::now();
  // An HTTP endpoint keeps no rows to count: its 2xx answers, which the
  // committed count already is, are all there is.
  if (!sc.sinks_to_http())
    wait_until([&] { return sink_rows() >= load.records; }, load_ended,
               "the sink's table did not hold every acked record within 5 minutes");
  // A backlog's delivery ends with its last commit: counting millions of
  // rows (a full scan) only confirms it, and would be timed as delivery.
  const auto done = sc.measure == measure_kind::backlog ? committed_at : clock::now();
  daemon->stop();
  auto s = from_load(load, std::chrono::duration<double>(done - delivery_started).count());
  if (sc.measure == measure_kind::backlog) s.startup_s = daemon->startup_seconds();
  s.acked_per_s = load.seconds > 0 ? static_cast<double>(load.records) / load.seconds : 0;
  s.catch_up_s = std::chrono::duration<double>(done - load_ended).count();
  if (sc.measure == measure_kind::outage) {
    // Ingest is what an outage must not slow; the catch-up runs from when
    // the endpoint answers again (or the load's end, if later).
    s.records_per_s = s.acked_per_s;
    s.catch_up_s = std::chrono::duration<double>(done - std::max(load_ended, endpoint->refusing_until())).count();
    s.sink_refusals = endpoint->refused();
  }
  s.records_per_fsync = sc.measure == measure_kind::backlog ? loaded_per_fsync : per(counts.synced_records, counts.fsyncs);
  s.records_per_commit = per(counts.committed_records, counts.sink_commits);
  if (sc.sinks_to_postgres()) {
    // The bench's own row counts commit too; flushed stats may lag by a second.
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    // Not the daemon's: the two statements of each postgres_commits() and the row counts.
    const double own = 4 + own_postgres_queries;
    s.records_per_db_commit =
        per(static_cast<double>(load.records), postgres_commits(sc.postgres) - db_commits_before - own);
  }
  return s;
}

sample run_baseline_once(const scenario& sc, const load_spec& spec, const std::string& dir,
                         const std::string& server_binary) {
  // A sustained run's reference is sustained too: a short one overstates the disk.
  const double seconds = sc.measure == measure_kind::sustained ? spec.seconds : std::min(spec.seconds, 3.0);
  const std::uint64_t per_frame = records_per_frame(spec);
  const std::size_t frame_bytes = per_frame * (spec.payload_bytes + 16);
  auto endpoint = own_endpoint(sc);
  const std::string url = endpoint ? endpoint->url() : sc.http;
  baseline_result base;
  std::uint64_t records_per_op = 1;  // the database and HTTP yardsticks count rows or POSTs
  switch (sc.baseline) {
    case baseline_kind::fsync:
      base = measure_fsync(dir, frame_bytes, seconds);
      records_per_op = per_frame;
      break;
    case baseline_kind::overwrite_fsync:
      base = measure_overwrite_fsync(dir, frame_bytes, seconds);
      records_per_op = per_frame;
      break;
    case baseline_kind::socket:
      base = measure_socket_round_trip(per_frame * (spec.payload_bytes + 4) + 24, seconds);
      records_per_op = per_frame;
      break;
    case baseline_kind::sqlite_insert: base = measure_sqlite_insert(dir, spec.payload_bytes, seconds); break;
    case baseline_kind::sqlite_bulk: base = measure_sqlite_bulk(dir, spec.payload_bytes, seconds); break;
    case baseline_kind::postgres_insert:
      base = measure_postgres_insert(sc.postgres, spec.producers, spec.payload_bytes, seconds);
      break;
    case baseline_kind::postgres_bulk: base = measure_postgres_bulk(sc.postgres, spec.payload_bytes, seconds); break;
    case baseline_kind::postgres_copy: base = measure_postgres_copy(sc.postgres, spec.payload_bytes, seconds); break;
    case baseline_kind::postgres_copy_table: base = measure_postgres_copy_table(sc.postgres, seconds); break;
    case baseline_kind::clickhouse_insert:
      base = measure_clickhouse_insert(sc.clickhouse, spec.payload_bytes, seconds);
      break;
    case baseline_kind::mysql_load: base = measure_mysql_load(sc.mysql, spec.payload_bytes, seconds); break;
    case baseline_kind::http_post:
      base = measure_http_post(url, sc.sink_concurrency(), spec.payload_bytes, seconds);
      break;
    case baseline_kind::fsync_post: {
      // The least one delivered record waits: its fdatasync, then one POST.
      const auto synced = measure_fsync(dir, spec.payload_bytes + 16, seconds / 2);
      const auto posted = measure_http_post(url, 1, spec.payload_bytes, seconds / 2);
      base = {posted.ops_per_s, synced.p50_us + posted.p50_us};
      break;
    }
    case baseline_kind::redis_lpush:
      if (!redis_available()) throw std::runtime_error("the redis_lpush baseline needs redis-server (make bench installs it)");
      base = measure_redis_lpush(dir, spec.producers, spec.pipeline, spec.payload_bytes, seconds);
      records_per_op = 1;
      break;
    case baseline_kind::none:
      return {};
    case baseline_kind::no_outage: {
      scenario steady = sc;
      steady.outage_seconds = 0;  // the same round with an endpoint that never refuses
      const std::string own = dir + "/no-outage";
      std::filesystem::create_directories(own);
      return run_scenario_once(steady, spec, own, server_binary, "");
    }
    case baseline_kind::durable_tier: {
      // The same load at Durable, on a cluster like the scenario's.
      load_spec durable = spec;
      durable.replicated = false;
      durable.durable = true;
      const std::string own = dir + "/durable-tier";  // its own nodes, apart from the scenario's
      std::filesystem::create_directories(own);
      return run_scenario_once(sc, durable, own, server_binary, "");
    }
    case baseline_kind::minimal_server: {
      // The scenario's own load, for as long, against the least a server must do.
      minimal_server server(dir);
      warm_up(server.socket_path(), spec);
      auto load = run_load(server.socket_path(), spec);
      if (server.failed()) throw std::runtime_error("minimal server: a write or fdatasync failed in " + dir);
      auto s = from_load(load, load.seconds);
      s.records_per_fsync = server.records_per_fsync();  // warm-up included: the same load all along
      return s;
    }
  }
  sample s;
  s.records_per_s = base.ops_per_s * static_cast<double>(records_per_op);
  s.p50_us = base.p50_us;
  return s;
}

}  // namespace weir::bench
