#include "daemon/cpu_keep_awake.hpp"

#include <pthread.h>
#include <sched.h>

namespace weir {

cpu_keep_awake::cpu_keep_awake(std::chrono::microseconds window, const std::vector<int>& cpus) : window_(window) {
  stats_.spinners = static_cast<unsigned>(cpus.size());
  threads_.reserve(cpus.size());
  for (int cpu : cpus) threads_.emplace_back([this, cpu] { run(cpu); });
}

cpu_keep_awake::~cpu_keep_awake() {
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
    // Asleep until activity: the sleeper count is raised before the last
    // look at the counter, and note_activity() adds before it reads the
    // count, so either this sees the new activity or that sees a sleeper to
    // wake (and wait() itself returns if the value moved meanwhile).
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    if (activity_.load(std::memory_order_seq_cst) == seen) activity_.wait(seen, std::memory_order_seq_cst);
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    if (stopping_.load(std::memory_order_relaxed)) break;

    spinning_.fetch_add(1, std::memory_order_relaxed);
    const bool busy = spin_while_active(seen);
    spinning_.fetch_sub(1, std::memory_order_relaxed);
    if (busy) {
      stats_.rests.fetch_add(1, std::memory_order_relaxed);
      // Activity during the rest moves the counter: the wait above then
      // returns at once and the spinner looks again.
      std::this_thread::sleep_for(busy_rest);
    }
  }
}

bool cpu_keep_awake::spin_while_active(std::uint32_t& seen) {
  using clock = std::chrono::steady_clock;
  auto period_started = clock::now();
  auto until = period_started;  // moved on at once: the counter has moved
  std::uint32_t period_first = seen;
  const auto count_spun = [&](clock::time_point now) {
    stats_.spun_ns.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(now - period_started).count(),
                             std::memory_order_relaxed);
  };
  for (;;) {
    const auto now = clock::now();
    const std::uint32_t current = activity_.load(std::memory_order_relaxed);
    if (current != seen) {
      seen = current;
      until = now + window_;
    } else if (now >= until || stopping_.load(std::memory_order_relaxed)) {
      count_spun(now);
      return false;
    }
    if (now - period_started >= busy_period) {
      count_spun(now);
      // Reads this frequent keep the CPUs from halting long; spinning
      // between the real threads then only adds switches to and from the
      // spinner (docs/benchmarks.md: 64 producers lost up to a fifth of
      // their rate to spinners that did not rest).
      if (current - period_first > busy_reads_per_period) return true;
      period_started = now;
      period_first = current;
    }
  }
}

std::vector<int> allowed_cpus(unsigned count) {
  std::vector<int> cpus;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE && cpus.size() < count; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  return cpus;
}

}  // namespace weir
