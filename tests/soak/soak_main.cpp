// weir-soak: a crash soak of the real weir-server binary. Producers push for
// many cycles while the daemon is killed, frozen and killed during recovery;
// at the end every acked record must be in the sink, in order per producer
// and shard. One line on stdout says how it went (see options.cpp).
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "soak/cycle_plan.hpp"
#include "soak/cycle_runner.hpp"
#include "soak/final_delivery.hpp"
#include "soak/ledger.hpp"
#include "soak/loss_report.hpp"
#include "soak/options.hpp"
#include "soak/producer.hpp"
#include "soak/sink_audit.hpp"
#include "soak/soak_daemon.hpp"
#include "soak/soak_setup.hpp"
#include "support/daemon_process.hpp"

using namespace weir::soak;
using clock_type = std::chrono::steady_clock;

namespace {

double seconds_since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

void print_progress(std::uint32_t cycle, const options& o, const std::vector<std::unique_ptr<ledger>>& ledgers,
                    const fault_counts& f, const soak_paths& paths, clock_type::time_point began) {
  std::uint64_t sent = 0, acked = 0, nacked = 0, lost_conns = 0, timeouts = 0;
  for (const auto& l : ledgers) {
    sent += l->sent.load();
    acked += l->acked.load();
    nacked += l->nacked.load();
    lost_conns += l->connections_lost.load();
    timeouts += l->timeouts.load();
  }
  std::fprintf(stderr,
               "soak: cycle %u/%u sent=%llu acked=%llu nacked=%llu connections_lost=%llu timeouts=%llu starts=%llu "
               "recovery_kills=%llu freezes=%llu sink_rows=%lld elapsed=%.1fs\n",
               cycle, o.cycles, (unsigned long long)sent, (unsigned long long)acked, (unsigned long long)nacked,
               (unsigned long long)lost_conns, (unsigned long long)timeouts, (unsigned long long)f.starts,
               (unsigned long long)f.recovery_kills, (unsigned long long)f.freezes,
               (long long)sink_row_count(paths.sink), seconds_since(began));
}

/// The configuration must be valid before the first kill, or every cycle
/// would just report a daemon that never came up.
bool config_is_valid(const options& o, const soak_paths& paths) {
  auto args = daemon_args(o, paths);
  args.push_back("--check-config");
  const auto r = weir::test::run_binary(o.server, args, paths.root, {}, std::chrono::seconds(30));
  if (r.exit_code == 0) return true;
  std::fprintf(stderr, "weir-soak: %s --check-config failed (status %d): %s%s\n", o.server.c_str(), r.exit_code,
               r.out.c_str(), r.err.c_str());
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const options o = parse_options(argc, argv);
  // A failed send to a dead daemon must not kill the soak (the client uses
  // MSG_NOSIGNAL; this also covers anything else).
  ::signal(SIGPIPE, SIG_IGN);
  soak_paths paths;
  try {
    paths = make_work_dir(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weir-soak: %s\n", e.what());
    return 2;
  }
  if (!std::filesystem::exists(o.server)) {
    std::fprintf(stderr, "weir-soak: no server binary at %s (see --server)\n", o.server.c_str());
    return 2;
  }
  if (!config_is_valid(o, paths)) return 2;
  std::fprintf(stderr, "soak: seed=%llu cycles=%u producers=%u shards=%u segment=%s dir=%s server=%s\n",
               (unsigned long long)o.seed, o.cycles, o.producers, o.shards, o.segment_bytes.c_str(),
               paths.root.c_str(), o.server.c_str());
  const auto began = clock_type::now();

  soak_daemon daemon({o.server, paths.root, daemon_args(o, paths), paths.log, paths.socket});
  std::mt19937_64 rng(o.seed);

  std::atomic<bool> stop{false};
  std::atomic<std::uint32_t> cycle{0};
  std::vector<std::unique_ptr<ledger>> ledgers;
  std::vector<std::thread> producers;
  for (std::uint32_t p = 0; p < o.producers; ++p) ledgers.push_back(std::make_unique<ledger>(p));
  for (std::uint32_t p = 0; p < o.producers; ++p) {
    producer_settings s{paths.socket, rng(), o.reply_timeout, &stop, &cycle};
    producers.emplace_back([s, &l = *ledgers[p]] { run_producer(s, l); });
  }

  fault_counts faults;
  startup_clock startup;
  std::uint32_t completed = 0;
  std::string failure;
  for (std::uint32_t c = 1; c <= o.cycles; ++c) {
    cycle.store(c);
    const cycle_plan plan = plan_cycle(rng, o);
    const auto r = run_cycle(daemon, plan, c, o, faults, startup);
    if (!r.ok) {
      failure = "cycle " + std::to_string(c) + " (" + describe(plan) + "): " + r.failure;
      break;
    }
    completed = c;
    if (c % 10 == 0 || c == o.cycles) print_progress(c, o, ledgers, faults, paths, began);
  }
  stop.store(true);
  for (auto& t : producers) t.join();
  cycle.store(o.cycles + 1);

  // Even after a failed cycle, one more start is tried: if the daemon comes
  // back, the audit still says what a failure cost. A daemon that would not
  // die or never got ready goes first.
  if (daemon.running()) {
    daemon.signal(SIGKILL);
    daemon.reap(std::chrono::seconds(10));
  }
  const auto caught_up = [&] {
    try {
      return audit_sink(paths.sink, ledgers).lost == 0;
    } catch (const std::exception&) {
      return false;  // the final audit reports it
    }
  };
  const auto fin = deliver_and_stop(daemon, paths.sink, caught_up, o.ready_timeout, o.catch_up_timeout);
  if (!fin.ok) failure += (failure.empty() ? "" : "\n") + std::string("final run: ") + fin.failure;

  audit_result a;
  try {
    a = audit_sink(paths.sink, ledgers);
  } catch (const std::exception& e) {
    failure += (failure.empty() ? "" : "\n") + std::string("audit: ") + e.what();
    for (const auto& l : ledgers) a.acked += l->acked.load();
    a.lost = a.acked;  // nothing could be shown to be delivered
  }
  std::uint64_t sent = 0, nacked = 0, timeouts = 0;
  for (const auto& l : ledgers) {
    sent += l->sent.load();
    nacked += l->nacked.load();
    timeouts += l->timeouts.load();
  }
  std::fprintf(stderr,
               "soak: sent=%llu acked=%llu nacked=%llu unknown_delivered=%llu nacked_delivered=%llu rows=%llu "
               "tracked_mismatches=%llu foreign_rows=%llu timeouts=%llu starts=%llu recovery_kills=%llu "
               "(before WAB recovered: %llu, before ready: %llu) typical_startup=%.1fms freezes=%llu kills_while_stopped=%llu "
               "final_catch_up=%.1fs wall=%.1fs\n",
               (unsigned long long)sent, (unsigned long long)a.acked, (unsigned long long)nacked,
               (unsigned long long)a.unknown_delivered, (unsigned long long)a.nacked_delivered,
               (unsigned long long)a.rows, (unsigned long long)a.tracked_mismatches,
               (unsigned long long)a.foreign_rows, (unsigned long long)timeouts, (unsigned long long)faults.starts,
               (unsigned long long)faults.recovery_kills, (unsigned long long)faults.recovery_kills_before_recovered,
               (unsigned long long)faults.recovery_kills_before_ready, startup.typical.count() / 1000.0,
               (unsigned long long)faults.freezes, (unsigned long long)faults.kills_while_frozen,
               fin.catch_up.count() / 1000.0, seconds_since(began));
  for (const auto& e : a.examples) std::fprintf(stderr, "soak: %s\n", e.c_str());
  if (!a.lost_records.empty())
    for (const auto& line : locate_in_wab(paths.data_dir, a.lost_records))
      std::fprintf(stderr, "soak: lost %s\n", line.c_str());
  if (!failure.empty()) std::fprintf(stderr, "soak: FAILED: %s\n", failure.c_str());

  const bool clean = failure.empty() && a.lost == 0 && a.order_violations == 0 && a.tracked_mismatches == 0 &&
                     a.foreign_rows == 0;
  if (!clean || o.keep || !paths.temporary)
    std::fprintf(stderr, "soak: work directory kept: %s (daemon.log has every run)\n", paths.root.c_str());
  else
    std::filesystem::remove_all(paths.root);
  std::printf("soak: cycles=%u acked=%llu lost=%llu duplicates=%llu order_violations=%llu\n", completed,
              (unsigned long long)a.acked, (unsigned long long)a.lost, (unsigned long long)a.duplicates,
              (unsigned long long)a.order_violations);
  std::fflush(stdout);
  return clean ? 0 : 1;
}
