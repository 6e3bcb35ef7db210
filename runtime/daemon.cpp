#include "runtime/daemon.hpp"

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "actors/connection.hpp"
#include "runtime/data_dir.hpp"
#include "runtime/log.hpp"
#include "runtime/startup_error.hpp"
#include "runtime/unix_listener.hpp"
#include "runtime/version.hpp"
#include "runtime/wab/file_io.hpp"
#include "runtime/wab/recovery.hpp"
#include "runtime/wab/segment_format.hpp"

namespace weir {

namespace {

std::size_t scheduler_threads(const config& cfg) {
  if (cfg.runtime.scheduler_threads > 0) return static_cast<std::size_t>(cfg.runtime.scheduler_threads);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return std::min(cores, 4u);
}

/// Blocks the signals the daemon handles so that every thread started after
/// this inherits the mask and only sigwait() in the main thread sees them.
sigset_t block_shutdown_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  return set;
}

/// Keys that validate but whose feature this version does not serve yet:
/// refusing beats silently ignoring an operator's intent.
void refuse_unserved_features(const config& cfg) {
  if (!cfg.listen.tcp.empty())
    throw startup_error("listen.tcp = " + cfg.listen.tcp +
                        ": the TCP+TLS listener is not available in this version; use listen.unix");
  if (!cfg.cluster.listen.empty())
    throw startup_error("cluster.listen = " + cfg.cluster.listen +
                        ": clustering is not available in this version");
}

}  // namespace

/// Recovers every shard directory present (a shard count lowered since the
/// last run still leaves data to deliver) and creates the configured ones.
void recover_wab(const config& cfg) {
  const std::string wab_dir = cfg.data_dir + "/wab", quarantine = cfg.data_dir + "/quarantine";
  ensure_private_directory(wab_dir, "data_dir");
  ensure_private_directory(quarantine, "data_dir");
  for (std::int64_t shard = 0; shard < cfg.ingest.shards; ++shard)
    ensure_private_directory(wab_dir + "/" + wab::shard_dir_name(static_cast<std::uint16_t>(shard)), "data_dir");
  std::vector<std::string> shard_dirs;
  for (const auto& entry : std::filesystem::directory_iterator(wab_dir))
    if (entry.is_directory() && entry.path().filename().string().rfind("shard_", 0) == 0)
      shard_dirs.push_back(entry.path().string());
  std::sort(shard_dirs.begin(), shard_dirs.end());
  std::uint64_t records = 0, segments = 0, truncated = 0, quarantined = 0;
  for (const auto& dir : shard_dirs) {
    try {
      auto r = wab::recover_shard(*wab::default_file_io(), dir, quarantine);
      records += r.records;
      segments += r.segments.size();
      truncated += r.truncated_segments;
      quarantined += r.quarantined_segments;
    } catch (const wab::recovery_error& e) {
      throw startup_error(std::string("WAB recovery failed: ") + e.what());
    }
  }
  log::info("WAB recovered", {{"shards", std::to_string(shard_dirs.size())},
                              {"segments", std::to_string(segments)},
                              {"records", std::to_string(records)},
                              {"truncated_segments", std::to_string(truncated)},
                              {"quarantined_segments", std::to_string(quarantined)}});
}

int run_daemon(const config& cfg) {
  refuse_unserved_features(cfg);
  const auto started = std::chrono::steady_clock::now();
  const sigset_t signals = block_shutdown_signals();
  ::umask(0077);

  ensure_private_directory(cfg.data_dir, "data_dir");
  data_dir_lock lock(cfg.data_dir);
  recover_wab(cfg);  // before any socket exists: nothing is accepted on a WAB not yet repaired

  // Sessions (and the stats they update) are released by connection actors,
  // which the actor system outlives: declare them first so they die last.
  listener_stats stats;
  boost::asio::io_context io;

  caf::actor_system_config caf_cfg;
  caf_cfg.set("scheduler.max-threads", scheduler_threads(cfg));
  caf_cfg.set("scheduler.policy", caf::atom("sharing"));
  caf::actor_system system{caf_cfg};

  auto work = boost::asio::make_work_guard(io);
  const connection_settings conn = connection_settings_from(cfg);

  std::unique_ptr<unix_listener> listener;
  if (!cfg.listen.unix_path.empty()) {
    unix_listener_options opts{cfg.listen.unix_path,
                               static_cast<std::size_t>(cfg.listen.max_connections),
                               std::chrono::milliseconds(cfg.listen.read_timeout_ms),
                               cfg.listen.peer_uid_check};
    listener = std::make_unique<unix_listener>(
        io, opts, stats, [&](connection_io_ptr io_ptr) { return spawn_connection(system, io_ptr, conn); });
    listener->open();
    listener->start();
  }

  std::vector<std::thread> io_threads;
  for (std::int64_t i = 0; i < cfg.runtime.io_threads; ++i) io_threads.emplace_back([&io] { io.run(); });

  const auto startup_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  log::info("weir-server ready",
            {{"version", std::string(version_string)},
             {"socket", cfg.listen.unix_path},
             {"data_dir", cfg.data_dir},
             {"shards", std::to_string(cfg.ingest.shards)},
             {"ack_mode", cfg.ingest.ack_mode == ack_mode::strict ? "strict" : "ordered"},
             {"startup_ms", std::to_string(startup_ms.count())}});

  int sig = 0;
  sigwait(&signals, &sig);
  log::info("shutting down", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});

  // Stop accepting and close every connection; then let the io threads drain
  // what is queued, bounded by shutdown_timeout_ms.
  if (listener) listener->stop();
  work.reset();
  auto joined = std::async(std::launch::async, [&] {
    for (auto& t : io_threads) t.join();
  });
  if (joined.wait_for(std::chrono::milliseconds(cfg.shutdown_timeout_ms)) != std::future_status::ready) {
    log::warn("shutdown_timeout_ms reached; abandoning queued socket work",
              {{"shutdown_timeout_ms", std::to_string(cfg.shutdown_timeout_ms)}});
    io.stop();
    joined.wait();
  }
  if (listener) listener->remove_socket_file();
  log::info("stopped", {{"connections_served", std::to_string(stats.accepted.load())}});
  return 0;
}

}  // namespace weir
