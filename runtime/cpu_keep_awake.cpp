#include "runtime/cpu_keep_awake.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>

namespace weir {

std::vector<int> spinner_cpus(const std::vector<int>& allowed, unsigned count, const std::vector<int>& disk_irq_cpus) {
  std::vector<int> chosen;
  for (int cpu : allowed)
    if (chosen.size() < count && std::find(disk_irq_cpus.begin(), disk_irq_cpus.end(), cpu) == disk_irq_cpus.end())
      chosen.push_back(cpu);
  if (chosen.empty()) chosen.assign(allowed.begin(), allowed.begin() + std::min<std::size_t>(count, allowed.size()));
  return chosen;
}

cpu_keep_awake::cpu_keep_awake(std::chrono::microseconds window, const std::vector<int>& cpus)
    : window_(window), cpus_(cpus) {
  threads_.reserve(cpus.size());
  try {
    for (int cpu : cpus) threads_.emplace_back([this, cpu] { run(cpu); });
  } catch (...) {
    stop();  // the spinners already started must not outlive a failed start
    throw;
  }
  stats_.spinners = static_cast<unsigned>(threads_.size());
}

cpu_keep_awake::~cpu_keep_awake() { stop(); }

void cpu_keep_awake::stop() noexcept {
  stopping_.store(true, std::memory_order_seq_cst);
  activity_.fetch_add(1, std::memory_order_seq_cst);
  activity_.notify_all();
  for (auto& t : threads_) t.join();
}

void cpu_keep_awake::run(int cpu) {
  // Pinned, so that every CPU has its own spinner; SCHED_IDLE, so that a
  // thread with work takes the CPU from it at once. Either may be refused
  // (a CPU gone offline, a seccomp policy): the spinner then still helps
  // wherever the kernel runs it.
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  pthread_setaffinity_np(pthread_self(), sizeof one, &one);
  sched_param idle{};
  pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
  pthread_setname_np(pthread_self(), "weir-awake");

  std::uint32_t seen = 0;  // the counter's first value: bytes noted before this thread ran still count
  while (!stopping_.load(std::memory_order_relaxed)) {
    // Asleep until activity. The spinner counts itself a sleeper before its
    // last look at the counter, and note_activity() adds to the counter
    // before it looks for sleepers (all sequentially consistent): either
    // this look sees the new activity, or that one sees a sleeper to wake
    // (and wait() returns by itself if the value moved in between).
    asleep_.fetch_add(1, std::memory_order_release);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    if (activity_.load(std::memory_order_seq_cst) == seen) activity_.wait(seen, std::memory_order_seq_cst);
    asleep_.fetch_sub(1, std::memory_order_release);
    if (stopping_.load(std::memory_order_relaxed)) break;

    spinning_.fetch_add(1, std::memory_order_release);
    const bool busy = spin_while_active(seen);
    stats_.spells.fetch_add(1, std::memory_order_release);
    spinning_.fetch_sub(1, std::memory_order_release);
    // Bytes that came during the last rest are new to `seen`: the wait
    // above then returns at once and the spinner spins for them.
    if (busy) rest_while_busy();
  }
}

void cpu_keep_awake::rest_while_busy() {
  // The rate is judged from the counter alone while resting: spinning to
  // look again, even for a millisecond every rest, cost many producers
  // throughput (decision 0010).
  using clock = std::chrono::steady_clock;
  bool busy = true;
  while (busy && !stopping_.load(std::memory_order_relaxed)) {
    stats_.rests.fetch_add(1, std::memory_order_relaxed);
    const std::uint32_t first = activity_.load(std::memory_order_relaxed);
    const auto started = clock::now();
    std::this_thread::sleep_for(busy_rest);
    busy = too_frequent(activity_.load(std::memory_order_relaxed) - first, clock::now() - started);
  }
}

bool cpu_keep_awake::too_frequent(std::uint32_t reads, std::chrono::steady_clock::duration over) {
  const auto period_ns = static_cast<std::uint64_t>(std::chrono::nanoseconds(busy_period).count());
  const auto over_ns = static_cast<std::uint64_t>(std::chrono::nanoseconds(over).count());
  return static_cast<std::uint64_t>(reads) * period_ns > busy_reads_per_period * over_ns;
}

bool cpu_keep_awake::spin_while_active(std::uint32_t& seen) {
  using clock = std::chrono::steady_clock;
  auto period_started = clock::now();
  auto until = period_started;  // moved on at once: the counter has moved
  // The rate is judged from what comes while spinning: after a rest, `seen`
  // is from before it, and the reads of the whole rest counted against the
  // first millisecond would send the spinner back to rest at any rate above
  // one read in 2.5 ms, for as long as the producers keep on.
  std::uint32_t period_first = activity_.load(std::memory_order_relaxed);
  const auto count_spun = [&](clock::time_point now) {
    stats_.spun_ns.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(now - period_started).count(),
                             std::memory_order_relaxed);
  };
  // No pause instruction in this loop: in a virtual machine a long run of
  // pauses can make the hypervisor take the vCPU away (pause-loop exiting),
  // which is the halt this spinner is there to avoid.
  for (;;) {
    const auto now = clock::now();
    const std::uint32_t current = activity_.load(std::memory_order_relaxed);
    if (stopping_.load(std::memory_order_relaxed)) {
      count_spun(now);
      return false;
    }
    if (current != seen) {
      seen = current;
      until = now + window_;
    } else if (now >= until) {
      count_spun(now);
      return false;
    }
    const auto elapsed = now - period_started;
    if (elapsed >= busy_period) {
      count_spun(now);
      // Reads this frequent keep the CPUs from halting long; spinning
      // between the real threads then only adds switches to and from the
      // spinner. A rate, over the period as it really lasted: a spinner
      // preempted for long has a long period, not a busy one.
      if (too_frequent(current - period_first, elapsed)) return true;
      period_started = now;
      period_first = current;
    }
  }
}

}  // namespace weir
