#include "bench/run_once.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <thread>

#include "bench/baselines.hpp"
#include "bench/cluster_runner.hpp"
#include "bench/watchdog.hpp"
#include "bench/daemon_counters.hpp"
#include "bench/daemon_runner.hpp"
#include "bench/load_driver.hpp"
#include "bench/minimal_server.hpp"
#include "bench/http_baselines.hpp"
#include "bench/mysql_baselines.hpp"
#include "bench/postgres_baselines.hpp"
#include "wab/segment_format.hpp"
#include "wab/segment_reader.hpp"

namespace weir::bench {

namespace {

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
      if (auto extent = wab::read_segment_extent(*io, e.path().string())) total += extent->end;
  return total;
}

}  // namespace

sample run_scenario_once(const scenario& sc, const load_spec& spec, const std::string& dir,
                         const std::string& server_binary, const std::string& socket) {
  // A delivery round counts its own rows: the table starts empty.
  if (sc.sinks_to_postgres() && socket.empty()) postgres_reset(sc.postgres);
  if (sc.sinks_to_mysql() && socket.empty()) mysql_reset(sc.mysql);
  std::unique_ptr<daemon_runner> single;
  std::unique_ptr<cluster_runner> cluster;
  if (socket.empty() && sc.cluster_nodes > 0)
    cluster = std::make_unique<cluster_runner>(server_binary, dir, sc.daemon_settings, sc.cluster_nodes,
                                               sc.cluster_replicas);
  else if (socket.empty())
    single = std::make_unique<daemon_runner>(server_binary, dir, sc.daemon_settings);
  daemon_runner* daemon = cluster ? &cluster->first() : single.get();
  // Delivery and recovery measure from the first push: no warm-up there.
  note_step("warming up");
  if (sc.measure == measure_kind::ingest) warm_up(socket.empty() ? daemon->socket_path() : socket, spec);
  note_step("reading the daemon's counters before the load");
  const daemon_counters before = daemon ? read_daemon_counters(daemon->admin_address()) : daemon_counters{};
  const auto started = std::chrono::steady_clock::now();
  note_step("driving the load");
  auto load = run_load(socket.empty() ? daemon->socket_path() : socket, spec);
  note_step("after the load");
  if (sc.measure == measure_kind::ingest) {
    auto s = from_load(load, load.seconds);
    if (daemon) {
      const auto after = read_daemon_counters(daemon->admin_address());
      s.records_per_fsync = per(after.synced_records - before.synced_records, after.fsyncs - before.fsyncs);
      if (cluster) cluster->stop();
      else daemon->stop();
    }
    return s;
  }
  if (!daemon) throw std::runtime_error("measure: delivery or recovery needs the daemon weir-bench starts (no --socket)");
  if (sc.measure == measure_kind::recovery) {
    // The backlog the load left (the scenario's sink cannot take it), a
    // crash, and a restart on it.
    daemon->kill_hard();
    auto s = from_load(load, load.seconds);
    daemon_runner restarted(server_binary, dir, sc.daemon_settings);
    s.startup_s = restarted.startup_seconds();
    restarted.stop();
    // Counted once recovery has sealed the segments the crash left open.
    s.backlog_bytes = wab_bytes(dir + "/var/wab");
    return s;
  }
  const auto load_ended = std::chrono::steady_clock::now();
  // The daemon's count of committed records says when to look; the sink's
  // own rows confirm it. Counting rows all along would load the database
  // under test (a full scan every poll).
  const std::string db = dir + "/var/sink.db";
  auto sink_rows = [&] {
    if (sc.sinks_to_postgres()) return postgres_row_count(sc.postgres);
    if (sc.sinks_to_mysql()) return mysql_row_count(sc.mysql);
    return sqlite_row_count(db);
  };
  daemon_counters counts;
  auto poll = [&](auto&& arrived) {
    while (!arrived()) {
      if (std::chrono::steady_clock::now() - load_ended > std::chrono::minutes(5))
        throw std::runtime_error("the sink did not receive every acked record within 5 minutes");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  };
  poll([&] {
    counts = read_daemon_counters(daemon->admin_address());
    return counts.committed_records >= static_cast<double>(load.records);
  });
  // An HTTP endpoint keeps no rows to count: its 2xx answers, which the
  // committed count already is, are all there is.
  if (!sc.sinks_to_http()) poll([&] { return sink_rows() >= load.records; });
  const auto done = std::chrono::steady_clock::now();
  daemon->stop();
  // Delivery counts records per second from the first push until the sink holds them all.
  auto s = from_load(load, std::chrono::duration<double>(done - started).count());
  s.catch_up_s = std::chrono::duration<double>(done - load_ended).count();
  s.acked_per_s = load.seconds > 0 ? static_cast<double>(load.records) / load.seconds : 0;
  s.records_per_fsync = per(counts.synced_records, counts.fsyncs);
  s.records_per_commit = per(counts.committed_records, counts.sink_commits);
  return s;
}

sample run_baseline_once(const scenario& sc, const load_spec& spec, const std::string& dir,
                         const std::string& server_binary) {
  const double seconds = std::min(spec.seconds, 3.0);
  const std::uint64_t per_frame = records_per_frame(spec);
  baseline_result base;
  std::uint64_t records_per_op = per_frame;
  switch (sc.baseline) {
    case baseline_kind::fsync:
      base = measure_fsync(dir, per_frame * (spec.payload_bytes + 16), seconds);
      break;
    case baseline_kind::overwrite_fsync:
      base = measure_overwrite_fsync(dir, per_frame * (spec.payload_bytes + 16), seconds);
      break;
    case baseline_kind::socket:
      base = measure_socket_round_trip(per_frame * (spec.payload_bytes + 4) + 24, seconds);
      break;
    case baseline_kind::sqlite_insert:
      base = measure_sqlite_insert(dir, spec.payload_bytes, seconds);
      records_per_op = 1;
      break;
    case baseline_kind::sqlite_bulk:
      base = measure_sqlite_bulk(dir, spec.payload_bytes, seconds);
      records_per_op = 1;  // it counts rows
      break;
    case baseline_kind::postgres_insert:
      base = measure_postgres_insert(sc.postgres, spec.producers, spec.payload_bytes, seconds);
      records_per_op = 1;  // it counts rows
      break;
    case baseline_kind::postgres_copy:
      base = measure_postgres_copy(sc.postgres, spec.payload_bytes, seconds);
      records_per_op = 1;
      break;
    case baseline_kind::mysql_load:
      base = measure_mysql_load(sc.mysql, spec.payload_bytes, seconds);
      records_per_op = 1;
      break;
    case baseline_kind::http_post:
      base = measure_http_post(sc.http, sc.sink_concurrency(), spec.payload_bytes, seconds);
      records_per_op = 1;  // one record per POST, as the raw sink sends them
      break;
    case baseline_kind::none:
      return {};
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
