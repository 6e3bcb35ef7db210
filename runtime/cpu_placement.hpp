#pragma once
// Gathers the daemon's threads on one CPU while the whole daemon fits on one,
// and spreads them over every usable CPU again when it does not
// (`runtime.cpu_placement: adaptive`).
//
// A lone producer's record crosses several threads: the socket thread, the
// connection actor, the shard writer, the producer itself on the ack. Spread
// over the CPUs, each hand-off tends to wake a CPU that halted meanwhile, and
// on a small virtual machine that costs tens of microseconds, more than
// everything weir does for the record. On one CPU the hand-offs are plain
// switches, and the producer, woken by a thread on that CPU, tends to be
// pulled there too. That CPU is one that takes the WAB disk's interrupts,
// so the sync's completion is on the CPU that waits for it. Gathered, a
// lone producer's record is faster; many producers need every CPU and lose
// throughput gathered (decision 0011).
//
// So a controller thread looks ten times a second at how many connections
// sent bytes, and at the process's threads: CPU time they ran and time they
// waited, runnable, for a CPU (schedstat). Spread, it gathers them once half
// a second has shown at most 8 connections sending and less than 0.85 of a
// CPU used; gathered, it spreads them at the first tenth of a second with
// more connections sending, the CPU nearly full, or threads queuing for it
// (a backlog to deliver, another process on that CPU). Measured gathered
// against spread, one to eight producers did as well or better, sixteen
// Durable ones worse (decision 0011). A gathering undone within 10 s doubles the wait before the next
// one (up to 64 s), so a load at the edge does not flap. Not used with the
// keep-awake spinners (daemon.cpp): they pin themselves, and it would move
// them.
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <cstdint>
#include <thread>
#include <vector>

#include <sys/types.h>

#include "observability/cpu_placement_stats.hpp"
#include "observability/io_spin_stats.hpp"

namespace weir {

class client_activity;

/// The CPU to gather on: the lowest of `allowed` that takes the WAB disk's
/// interrupts; the lowest of `allowed` when none does or they are unknown;
/// -1 when nothing is allowed.
int gather_cpu(const std::vector<int>& allowed, const std::vector<int>& disk_irq_cpus);

/// One tick: the connections that sent bytes, and what the process's
/// threads did, per second of wall time.
struct placement_sample {
  std::uint32_t sending_connections = 0;
  double cpu_cores = 0;        // CPU time run
  double waiting_threads = 0;  // time spent runnable, waiting for a CPU
};

/// The decision rule, apart from the threads it moves (tests drive it).
class placement_policy {
 public:
  using clock = std::chrono::steady_clock;
  enum class move { stay, gather, spread };

  /// A tick with more connections sending is too busy for one CPU.
  static constexpr std::uint32_t most_sending_connections = 8;
  /// Spread: a tick is quiet with few connections sending and under this
  /// much CPU; this many quiet ticks in a row gather.
  static constexpr double gather_below_cores = 0.85;
  static constexpr int quiet_ticks_to_gather = 5;
  /// Gathered: a tick with more connections sending, or above either, spreads.
  static constexpr double spread_above_cores = 0.9;
  static constexpr double spread_above_waiting = 1.5;
  /// The wait after a spread before the next gathering; a gathering undone
  /// sooner than `settled` doubles it.
  static constexpr std::chrono::seconds first_hold{1};
  static constexpr std::chrono::seconds longest_hold{64};
  static constexpr std::chrono::seconds settled{10};

  move next(const placement_sample& s, clock::time_point now);
  /// The threads could not be moved as next() said: the next tick decides again.
  void move_failed() noexcept { gathered_ = !gathered_; }
  bool gathered() const noexcept { return gathered_; }
  clock::duration hold() const noexcept { return hold_; }

 private:
  bool gathered_ = false;
  int quiet_ticks_ = 0;
  clock::duration hold_ = first_hold;
  clock::time_point spread_at_{};  // the epoch: the first gathering waits for quiet ticks only
  clock::time_point gathered_at_{};
};

class cpu_placement {
 public:
  static constexpr std::chrono::milliseconds tick{100};

  /// Starts the controller; threads move between {gather} and `spread`.
  /// Inactive (no thread; off_reason() says why) when `spread` has fewer
  /// than two CPUs or lacks `gather`, or the threads' schedstat cannot be read.
  /// The io thread's polling (`spin`, may be null) is not counted as CPU used.
  cpu_placement(int gather, std::vector<int> spread, client_activity& activity,
                const io_spin_stats* spin = nullptr);
  ~cpu_placement();
  cpu_placement(const cpu_placement&) = delete;
  cpu_placement& operator=(const cpu_placement&) = delete;

  /// Spreads the threads for good and ends the controller (the stats stay).
  void stop();
  /// Why the threads are not moved; null while the controller runs.
  const char* off_reason() const noexcept { return off_reason_; }
  const cpu_placement_stats& stats() const noexcept { return stats_; }

 private:
  struct thread_times {
    std::uint64_t ran_ns = 0;
    std::uint64_t waited_ns = 0;
  };
  void run();
  /// The tick's sample from the threads seen both now and at the last
  /// tick; threads first seen now go to `born`.
  placement_sample sample(std::chrono::steady_clock::duration over, std::vector<pid_t>& born);
  /// Every thread of the process onto `cpus`, again until a pass finds no
  /// thread it had not moved (one started meanwhile by a thread not yet
  /// moved has the old affinity). False when /proc/self/task cannot be read
  /// or a thread refused.
  bool place(const std::vector<int>& cpus);
  /// The threads in `ids` onto `cpus`; false when one that still exists refused.
  static bool place_threads(const std::vector<pid_t>& ids, const std::vector<int>& cpus);
  /// Where the threads belong now: gather_set_ or spread_.
  const std::vector<int>& current_cpus() const;

  const std::vector<int> gather_set_;  // {the CPU to gather on}
  const std::vector<int> spread_;
  client_activity& activity_;
  placement_policy policy_;
  std::map<pid_t, thread_times> last_;
  const io_spin_stats* spin_;
  std::uint64_t last_spun_ns_ = 0;
  cpu_placement_stats stats_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool warned_ = false;  // a move failed and the log said so
  const char* off_reason_ = nullptr;
  std::thread thread_;
};

}  // namespace weir
