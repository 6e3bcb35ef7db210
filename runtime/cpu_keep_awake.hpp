#pragma once
// Keeps the daemon's CPUs out of their idle state while producers are active
// (`runtime.keep_awake_us`), so that a wake-up does not wait for a halted CPU.
//
// On a small virtual machine a halted vCPU takes tens of microseconds to
// resume: the disk's completion of an fdatasync, the reply's wake-up of the
// producer and the next frame's wake-up of the socket thread each pay it,
// more than everything weir does for a record. One thread per usable core,
// pinned to it, runs at SCHED_IDLE priority — any runnable thread preempts
// it at once — and spins for `window` after the last client bytes arrived;
// then it sleeps until the next, at no cost while the daemon is idle. Under
// heavy load (client bytes arriving more often than every 50 µs) the
// spinners rest: CPUs that busy seldom halt, and spinning between the real
// threads only adds switches. The price is CPU time: while few producers
// are active the spinners use every cycle the daemon's real threads leave,
// and that shows in the process's CPU time (and, in a container, in its CPU
// quota).
//
// No spinner goes on a CPU that takes the WAB disk's interrupts (unless
// every usable CPU does): the sync's completion then reaches a halted CPU
// and is not slowed, and the spinners that keep the other CPUs awake are
// the ones that pay: a spinner on the other CPU only did better for a
// lone Durable producer than spinners on both (decision 0010).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "observability/keep_awake_stats.hpp"

namespace weir {

/// The CPUs the spinners go on: the lowest `count` of `allowed` that are not
/// in `disk_irq_cpus`; when every allowed CPU is, the lowest `count` of them
/// all (a CPU kept awake still beats one that halts).
std::vector<int> spinner_cpus(const std::vector<int>& allowed, unsigned count, const std::vector<int>& disk_irq_cpus);

class cpu_keep_awake {
 public:
  /// Busy: reads of client bytes more often than busy_reads_per_period per
  /// busy_period (20,000 a second), over a period of at least busy_period.
  /// A spinner that sees it rests for busy_rest, and again while the bytes
  /// that came during the rest were that frequent.
  static constexpr std::chrono::milliseconds busy_period{1};
  static constexpr std::uint32_t busy_reads_per_period = 20;
  static constexpr std::chrono::milliseconds busy_rest{50};

  /// Starts one spinner per CPU of `cpus` (ids as in sched_setaffinity),
  /// asleep until the first note_activity(); `window` must be > 0.
  cpu_keep_awake(std::chrono::microseconds window, const std::vector<int>& cpus);
  ~cpu_keep_awake();
  cpu_keep_awake(const cpu_keep_awake&) = delete;
  cpu_keep_awake& operator=(const cpu_keep_awake&) = delete;

  /// Client bytes arrived: every spinner keeps its CPU awake for `window`
  /// from now. One atomic add; the first call after spinners went to sleep
  /// also wakes them (it claims the sleepers, so the calls after it do not
  /// pay for a wake-up again while they are on their way).
  void note_activity() noexcept {
    activity_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0 && sleepers_.exchange(0, std::memory_order_seq_cst) > 0)
      activity_.notify_all();
  }

  const keep_awake_stats& stats() const noexcept { return stats_; }
  /// The CPUs with a spinner.
  const std::vector<int>& cpus() const noexcept { return cpus_; }
  /// Spinners spinning, and spinners asleep waiting for client bytes (not
  /// resting), at this moment.
  unsigned spinning() const noexcept { return spinning_.load(std::memory_order_acquire); }
  unsigned asleep() const noexcept { return asleep_.load(std::memory_order_acquire); }

 private:
  void run(int cpu);
  /// Spins until `window_` passes without activity (false) or activity turns
  /// out too frequent to spin for (true); `seen` follows the counter.
  bool spin_while_active(std::uint32_t& seen);
  /// Rests for busy_rest as long as client bytes came too often during the
  /// last rest.
  void rest_while_busy();
  /// Whether `reads` over `over` is more often than the busy rate.
  static bool too_frequent(std::uint32_t reads, std::chrono::steady_clock::duration over);
  void stop() noexcept;

  const std::chrono::nanoseconds window_;
  std::atomic<std::uint32_t> activity_{0};
  std::atomic<unsigned> sleepers_{0};  // spinners the next note_activity() must wake
  std::atomic<unsigned> spinning_{0};
  std::atomic<unsigned> asleep_{0};
  std::atomic<bool> stopping_{false};
  keep_awake_stats stats_;
  std::vector<int> cpus_;
  std::vector<std::thread> threads_;
};

}  // namespace weir
