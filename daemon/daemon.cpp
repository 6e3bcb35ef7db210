#include "daemon/daemon.hpp"

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <limits>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "config/sink_list.hpp"
#include "daemon/cluster_runtime.hpp"
#include "daemon/config_reload.hpp"
#include "daemon/reload_runner.hpp"
#include "daemon/retire.hpp"
#include "daemon/startup_checks.hpp"
#include "messages/ingest_protocol.hpp"
#include "observability/log.hpp"
#include "observability/metrics.hpp"
#include "observability/version.hpp"
#include "runtime/actor_settings.hpp"
#include "runtime/cpu_setup.hpp"
#include "runtime/data_dir.hpp"
#include "runtime/disk_interrupts.hpp"
#include "runtime/io_thread_loop.hpp"
#include "runtime/io_thread_unit.hpp"
#include "runtime/node_life.hpp"
#include "runtime/pipeline.hpp"
#include "runtime/backpressure_watch.hpp"
#include "runtime/process_limits.hpp"
#include "runtime/startup_error.hpp"
#include "runtime/usable_cores.hpp"
#include "runtime/wab_startup.hpp"
#include "transport/admin_server.hpp"
#include "transport/read_poller.hpp"
#include "transport/session_registry.hpp"
#include "transport/socket_access.hpp"
#include "transport/tls_context.hpp"
#include "transport/tls_listener.hpp"
#include "transport/unix_listener.hpp"
#include "wab/file_io.hpp"

namespace weir {

namespace {

/// Half the cores the daemon may run on (1 to 4): the other half is for the
/// threads that are not the scheduler's — the socket thread, each shard's
/// writer and fsync group, the drains and the sink. On two cores two
/// scheduler threads woke each other for every record; one delivered more
/// with many producers (decision 0008).
std::size_t scheduler_threads(const config& cfg) {
  if (cfg.runtime.scheduler_threads > 0) return static_cast<std::size_t>(cfg.runtime.scheduler_threads);
  return std::clamp(usable_cores() / 2, 1u, 4u);
}

/// CAF's scheduler (scheduler_threads threads, work sharing), weir's
/// message types, and in a cluster the middleman; the scheduler's threads.
std::size_t configure_actor_system(caf::actor_system_config& caf_cfg, const config& cfg) {
  const std::size_t threads = scheduler_threads(cfg);
  caf_cfg.set("scheduler.max-threads", threads);
  caf_cfg.set("scheduler.policy", caf::atom("sharing"));
  caf_cfg.add_message_types<caf::id_block::weir>();
  prepare_cluster_config(caf_cfg, cfg);
  return threads;
}

/// The producers' ports, bound (not yet accepting): the Unix socket, and
/// listen.tcp with its mutual TLS.
struct producer_ports {
  std::unique_ptr<unix_listener> unix_socket;
  std::unique_ptr<tls_context_store> tls_contexts;
  std::unique_ptr<tls_listener> tcp;
};

producer_ports open_producer_ports(const config& cfg, boost::asio::io_context& io, listener_stats& stats,
                                   session_registry& sessions, client_activity& activity, read_poller* poller,
                                   const unix_listener::actor_factory& make_connection) {
  producer_ports ports;
  if (!cfg.listen.unix_path.empty()) {
    unix_listener_options opts{cfg.listen.unix_path, std::chrono::milliseconds(cfg.listen.read_timeout_ms),
                               resolve_socket_access(cfg), &activity, poller};
    ports.unix_socket = std::make_unique<unix_listener>(io, opts, stats, sessions, make_connection);
    ports.unix_socket->open();
  }
  if (!cfg.listen.tcp.empty()) {
    try {
      ports.tls_contexts = std::make_unique<tls_context_store>(cfg.listen.tls, stats);
    } catch (const std::exception& e) {
      throw startup_error(e.what());
    }
    tls_listener_options opts{cfg.listen.tcp, std::chrono::milliseconds(cfg.listen.read_timeout_ms),
                              std::chrono::milliseconds(cfg.listen.tls_handshake_timeout_ms),
                              max_pending_handshakes(cfg.listen.max_connections), &activity};
    ports.tcp = std::make_unique<tls_listener>(io, opts, *ports.tls_contexts, stats, sessions, make_connection);
    ports.tcp->open();
  }
  return ports;
}

/// A stop's time (shutdown_timeout_ms). Every connection stops reading,
/// writes the replies it owes (Durable ones after their sync) and closes;
/// then the writers write and sync what is left and seal their segments.
/// The last fifth of the time (at most 1 s) is kept for those final syncs
/// and seals and the io threads' end, so that the whole stop fits in it;
/// past the connections' deadline they are cut (their unanswered records
/// are neither acked nor lost: they are on disk or never written).
class stop_budget {
 public:
  using clock = std::chrono::steady_clock;
  explicit stop_budget(std::chrono::milliseconds budget)
      : deadline_(clock::now() + budget),
        connections_deadline_(deadline_ - std::min<std::chrono::milliseconds>(budget / 5, std::chrono::seconds(1))),
        reserve_(std::min<std::chrono::milliseconds>(budget, std::chrono::seconds(1))) {}

  clock::time_point connections_deadline() const { return connections_deadline_; }
  /// What is left of the time, but never less than the reserve: a final
  /// sync cut short leaves a segment unsealed for the next start to scan.
  std::chrono::milliseconds left() const {
    return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - clock::now()), reserve_);
  }

 private:
  clock::time_point deadline_, connections_deadline_;
  std::chrono::milliseconds reserve_;
};

/// Stops accepting and lets every connection finish what it owes, until
/// the connections' deadline; then closes what is left.
void close_connections(const config& cfg, const stop_budget& budget, unix_listener* listener,
                       tls_listener* tcp_listener, session_registry& sessions, listener_stats& stats) {
  if (listener) listener->close();
  if (tcp_listener) tcp_listener->close();
  sessions.wind_down();
  while (stats.active.load() > 0 && stop_budget::clock::now() < budget.connections_deadline())
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (stats.active.load() > 0) {
    log::warn("shutdown_timeout_ms reached with connections still owed replies; closing them",
              {{"connections", std::to_string(stats.active.load())},
               {"shutdown_timeout_ms", std::to_string(cfg.shutdown_timeout_ms)}});
  }
  sessions.stop();
}

/// Waits for the io threads to run out of work, at most `limit`; then
/// stops the io context under them.
void join_io_threads(boost::asio::io_context& io, std::vector<std::thread>& threads, std::chrono::milliseconds limit) {
  auto joined = std::async(std::launch::async, [&] {
    for (auto& t : threads) t.join();
  });
  if (joined.wait_for(limit) != std::future_status::ready) {
    io.stop();
    joined.wait();
  }
}

/// Serves until SIGTERM or SIGINT (false) or SIGUSR1 (true: retire, deliver
/// everything first). Each SIGHUP asks for a reload, which runs off this
/// thread (daemon/reload_runner.hpp) so that SIGTERM is acted on at once,
/// whatever a reload is reading; once this returns, no reload runs any more.
bool serve_until_stopped(const sigset_t& signals, const config& cfg, std::function<config()> reread, pipeline& shards,
                         tls_context_store* tls_contexts, cluster_runtime* cluster) {
  config running = cfg;
  // Without a configuration source to read again, SIGHUP still reads the
  // secret and TLS files again (a rotated certificate at the same path).
  if (!reread) reread = [cfg] { return cfg; };
  std::function<std::string(const config::tls_files&)> reload_tls;
  if (tls_contexts) reload_tls = [=](const config::tls_files& files) { return tls_contexts->reload(files); };
  std::function<std::string(const config&)> reload_cluster_tls;
  if (cluster) reload_cluster_tls = [=](const config& next) { return cluster->reload_tls(next); };
  reload_runner reloads([&] {
    reload_config(running, reread, [&] { return shards.reload_sink_secrets(); }, reload_tls, reload_cluster_tls);
  });
  int sig = 0;
  for (;;) {
    sigwait(&signals, &sig);
    if (sig != SIGHUP) break;
    if (!reloads.request()) log::info("SIGHUP during a reload: another reload follows it");
  }
  log::info("shutting down", {{"signal", sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "SIGUSR1 (retire)"}});
  // A reload in progress gives up on the file it is reading, and none starts.
  reloads.stop();
  return sig == SIGUSR1;
}

/// What the ready line reports of the parts run_daemon started.
struct ready_facts {
  const tls_listener* tcp;  // null: off
  std::size_t actor_threads;
  const cpu_keep_awake* keep_awake;  // null: off
  const std::string& cpu_placement;
  bool read_batching, buffered_spin, admin;
};

/// The one line that says the daemon serves, with what it chose at start.
void log_ready(const config& cfg, std::chrono::steady_clock::time_point started, const ready_facts& f) {
  const auto startup_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  log::info("weir-server ready",
            {{"version", std::string(version_string)},
             {"socket", cfg.listen.unix_path.empty() ? "off" : cfg.listen.unix_path},
             {"tcp", f.tcp ? cfg.listen.tcp.substr(0, cfg.listen.tcp.rfind(':') + 1) + std::to_string(f.tcp->port())
                           : "off"},
             {"data_dir", cfg.data_dir},
             {"shards", std::to_string(cfg.ingest.shards)},
             {"ack_mode", cfg.ingest.ack_mode == ack_mode::strict ? "strict" : "ordered"},
             {"scheduler_threads", std::to_string(f.actor_threads)},
             {"keep_awake", f.keep_awake ? std::to_string(cfg.runtime.keep_awake_us) + "us on " +
                                               (f.keep_awake->cpus().size() == 1 ? "cpu " : "cpus ") +
                                               cpu_list(f.keep_awake->cpus())
                                         : "off"},
             {"cpu_placement", f.cpu_placement},
             {"read_batching", !f.read_batching                                        ? "off"
                               : cfg.runtime.read_batching == read_batching_mode::always ? "always"
                                                                                          : "adaptive"},
             {"buffered_spin", f.buffered_spin ? std::to_string(cfg.runtime.buffered_spin_us) + "us" : "off"},
             {"admin", f.admin ? "http://" + cfg.admin.listen + "/" : "off"},
             {"startup_ms", std::to_string(startup_ms.count())}});
}

/// The process before anything else: the allocator, enough descriptors for
/// every connection, shard and handshake, the signals it handles blocked
/// (block_handled_signals) and files private to its user.
sigset_t prepare_process(const config& cfg);

/// Blocks the signals the daemon handles so that every thread started after
/// this inherits the mask and only sigwait() in the main thread sees them.
/// SIGHUP (a closed terminal, or an operator's reload) is one of them: its
/// default action would end the daemon without a clean stop.
sigset_t block_handled_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGUSR1);  // retire: deliver everything, then stop (daemon/retire.hpp)
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  // A file size limit (ulimit -f) must surface as a failed write, which is
  // answered and logged, not kill the daemon.
  ::signal(SIGXFSZ, SIG_IGN);
  return set;
}

sigset_t prepare_process(const config& cfg) {
  configure_allocator();
  ensure_open_file_limit(cfg.listen.max_connections, cfg.ingest.shards,
                         cfg.listen.tcp.empty() ? 0 : static_cast<std::int64_t>(max_pending_handshakes(cfg.listen.max_connections)));
  const sigset_t signals = block_handled_signals();
  ::umask(0077);
  return signals;
}

/// A start that fails once the actor system exists unwinds through its
/// teardown, which waits for every actor: one still tied to a cluster peer
/// was seen to hold the process there for good, the reason never printed and
/// the service manager never told. Past 5 s the reason is logged and the
/// process exits 2.
struct failed_start_watchdog {
  const int uncaught = std::uncaught_exceptions();
  ~failed_start_watchdog() {
    if (std::uncaught_exceptions() <= uncaught) return;
    try {
      std::thread([] {
        std::this_thread::sleep_for(std::chrono::seconds(5));
        const std::string why = startup_error::last_reason();
        log::error("cannot start: " + (why.empty() ? std::string("an error during startup") : why),
                   {{"note", "the actor system did not stop within 5 s of the failed start; exiting"}});
        std::_Exit(2);
      }).detach();
    } catch (...) {
      // No thread to be had while unwinding: the teardown is left to end by itself.
    }
  }
};

}  // namespace

int run_daemon(const config& cfg, std::function<config()> reread) {
  check_startup_config(cfg);
  const auto started = std::chrono::steady_clock::now();
  const sigset_t signals = prepare_process(cfg);

  ensure_private_directory(cfg.data_dir, "data_dir");
  data_dir_lock lock(cfg.data_dir);
  // Before any socket exists: nothing is accepted on a WAB not yet repaired.
  wab_startup recovered = open_wab_of_this_node(cfg);
  auto usage = std::make_shared<wab::wab_usage>(static_cast<std::uint64_t>(cfg.limits.wab_max_bytes));
  usage->add(recovered.bytes);
  std::vector<std::string> sink_names;
  for (const auto& sink : configured_sinks(cfg)) sink_names.push_back(sink.name);
  metrics exported(cfg.data_dir, static_cast<std::uint16_t>(cfg.ingest.shards), sink_names);
  exported.recovered(recovered.records, recovered.quarantined);

  // Where the WAB's disk interrupts land and which CPUs the daemon may use.
  const cpu_layout cpus = look_at_cpus(cfg.data_dir + "/wab");
  // Sessions tell them of client bytes: they outlive the sessions.
  std::unique_ptr<cpu_keep_awake> keep_awake = start_keep_awake(cfg, cpus);
  client_activity activity(keep_awake.get());

  // Sessions (and the stats they update) are released by connection actors,
  // which the actor system outlives: declare them first so they die last.
  listener_stats stats;
  session_registry sessions(static_cast<std::size_t>(cfg.listen.max_connections), stats);
  boost::asio::io_context io;
  // The Unix sockets' reads (read_poller.hpp): null with runtime.read_batching: off.
  std::unique_ptr<read_poller> poller;
  if (cfg.runtime.read_batching != read_batching_mode::off && !cfg.listen.unix_path.empty())
    poller = std::make_unique<read_poller>(io, cfg.runtime.read_batching == read_batching_mode::always);

  // Declared before the actor system, so they outlive every actor that ran on them.
  std::vector<io_thread_unit> io_units(static_cast<std::size_t>(cfg.runtime.io_threads));
  caf::actor_system_config caf_cfg;  // the system keeps a reference to it
  const std::size_t actor_threads = configure_actor_system(caf_cfg, cfg);
  caf::actor_system system{caf_cfg};
  failed_start_watchdog watchdog;  // after the system: it runs before the system's teardown
  std::unique_ptr<cluster_metrics> cluster_stats;
  if (cluster_node(cfg) != 0)
    cluster_stats = std::make_unique<cluster_metrics>(cluster_node(cfg), static_cast<std::uint32_t>(cfg.cluster.replicas));
  pipeline shards(system, cfg, recovered, wab::default_file_io(), usage, &exported, cluster_stats.get());
  if (!shards.wait_started(std::chrono::seconds(30)))
    log::warn("a WAB shard writer has not started after 30 s; readiness says which, and the socket opens anyway");

  auto work = boost::asio::make_work_guard(io);
  connection_settings conn = connection_settings_for(cfg);
  conn.stats = &exported;
  conn.replicated_tier = cluster_stats != nullptr;

  // The io thread polls for a while after Buffered acks (io_thread_loop.hpp);
  // with more than one io thread none does (a thread polling while another
  // waits in epoll would find nothing).
  io_spin_stats spin_stats;
  io_spin_policy spin;
  if (cfg.runtime.buffered_spin_us > 0 && cfg.runtime.io_threads == 1)
    spin = {std::chrono::microseconds(cfg.runtime.buffered_spin_us), shards.buffered().get(), &spin_stats,
            poller ? &poller->stats() : nullptr};

  std::string placement_field;  // the ready line's cpu_placement
  auto placement = start_cpu_placement(cfg, cpus, keep_awake != nullptr, activity, spin.stats, placement_field);

  // Bound before the producer socket, so a taken port fails the start cleanly.
  std::unique_ptr<admin_server> admin;
  std::vector<metrics::sink_state> sink_states;
  for (const auto& lane : shards.sinks()) sink_states.push_back({lane.type, lane.delivery.get(), lane.dead_letters.get()});
  backpressure_watch backpressure(usage, conn.budget.get(), exported, sink_states);
  if (!cfg.admin.listen.empty())
    admin = std::make_unique<admin_server>(cfg.admin.listen, exported,
                                           metrics::live_state{&stats, usage.get(), sink_states,
                                                               conn.budget.get(), cluster_stats.get(),
                                                               keep_awake ? &keep_awake->stats() : nullptr,
                                                               placement ? &placement->stats() : nullptr,
                                                               poller ? &poller->stats() : nullptr,
                                                               spin.stats});

  // Both listeners give their connections the same kind of actor.
  auto make_connection = [&](connection_io_ptr io_ptr) {
    connection_settings pinned = conn;
    pinned.writer = shards.writer_for_new_connection();
    return spawn_connection(system, io_ptr, pinned);
  };
  producer_ports ports = open_producer_ports(cfg, io, stats, sessions, activity, poller.get(), make_connection);
  auto& listener = ports.unix_socket;
  auto& tcp_listener = ports.tcp;
  // Joined only once every port of its own is bound: a start that fails on
  // a taken port never joins, so it neither ends its peers' failover of its
  // replica nor leaves the actor system waiting on a peer as it unwinds.
  std::unique_ptr<cluster_runtime> cluster;
  if (cluster_stats)
    cluster = std::make_unique<cluster_runtime>(system, cfg, shards, *cluster_stats, recovered.incarnation);
  if (listener) listener->start();
  if (tcp_listener) tcp_listener->start();

  memory_trimmer trimmer(io, std::chrono::seconds(10));
  trimmer.start();
  if (poller) poller->start();
  std::vector<std::thread> io_threads;
  for (auto& unit : io_units) {
    unit.use(system);
    io_threads.emplace_back([&io, &unit, &spin] {
      io_thread_unit::bound_here bound(unit);  // connection actors woken by their bytes run here
      run_io_thread(io, spin);
    });
  }
  if (admin) admin->start();

  log_ready(cfg, started, {tcp_listener.get(), actor_threads, keep_awake.get(), placement_field, poller != nullptr,
                           spin.stats != nullptr, admin != nullptr});

  const bool retire =
      serve_until_stopped(signals, cfg, std::move(reread), shards, ports.tls_contexts.get(), cluster.get());
  if (retire) exported.set_retiring();  // /readyz says so from now on

  std::optional<stop_budget> budget(std::chrono::milliseconds(cfg.shutdown_timeout_ms));
  // The last replies, syncs and seals get every CPU: quiet sockets would
  // otherwise look like a light load and gather the threads mid-shutdown.
  if (placement) placement->stop();
  close_connections(cfg, *budget, listener.get(), tcp_listener.get(), sessions, stats);
  if (retire) {
    deliver_everything(signals, exported, sink_states);
    budget.emplace(std::chrono::milliseconds(cfg.shutdown_timeout_ms));  // the stop proper starts now
  }
  if (cluster) cluster->stop();  // no failover drain starts from here on
  if (!shards.shut_down(budget->left()))
    log::warn("WAB writers did not finish their final sync in time");
  trimmer.stop();
  if (poller) poller->stop();
  work.reset();
  join_io_threads(io, io_threads, budget->left());
  if (listener) listener->remove_socket_file();
  if (admin) admin->stop();
  log::info("stopped", {{"connections_served", std::to_string(stats.accepted.load())}});
  // Everything is synced, sealed and stored by now; what is left is tearing
  // down the actor system, which waits for every actor and, in a cluster,
  // for CAF's middleman (its multiplexer ends once every connection it holds
  // is closed). The hang once seen here came from CAF's own connect, which
  // blocked its middleman actor on a peer gone mid-connect; CAF makes no
  // connection any more (transport/cluster_bridge.hpp), cluster->stop()
  // closed every link and ended the bridge's middleman actor, and 345 stops
  // in every state of a peer found no hang. A sink worker blocked in a
  // request its endpoint never answers (up to sink.timeout_ms) holds the
  // teardown too: its batch is unconfirmed, and delivered again after the
  // next start. So this stays as a logged last resort: a stopped daemon must
  // still exit.
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::seconds(5));
    log::warn("the actor system did not finish within 5 s of stopping (a sink request still waiting for its "
              "answer, or a cluster link); exiting anyway: nothing is left unsynced, an unconfirmed batch is "
              "delivered again after the next start");
    std::_Exit(0);
  }).detach();
  return 0;
}

}  // namespace weir
