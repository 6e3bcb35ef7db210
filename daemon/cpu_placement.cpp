#include "daemon/cpu_placement.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <string>

#include "daemon/client_activity.hpp"
#include "daemon/disk_interrupts.hpp"
#include "observability/log.hpp"

namespace weir {
namespace {

/// The ids of the process's threads, from /proc/self/task.
std::vector<pid_t> thread_ids() {
  std::vector<pid_t> ids;
  DIR* dir = ::opendir("/proc/self/task");
  if (dir == nullptr) return ids;
  while (const dirent* e = ::readdir(dir)) {
    pid_t id = 0;
    const char* end = e->d_name + std::char_traits<char>::length(e->d_name);
    if (auto [p, ec] = std::from_chars(e->d_name, end, id); ec == std::errc{} && p == end && id > 0) ids.push_back(id);
  }
  ::closedir(dir);
  return ids;
}

/// A thread's "ran waited slices" line of schedstat (nanoseconds); false
/// when the thread is gone or the kernel keeps no schedstat.
bool read_schedstat(pid_t id, std::uint64_t& ran_ns, std::uint64_t& waited_ns) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", static_cast<int>(id));
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[96];
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0) return false;
  const char* p = text;
  const char* end = text + n;
  auto number = [&](std::uint64_t& out) {
    while (p < end && *p == ' ') ++p;
    auto [next, ec] = std::from_chars(p, end, out);
    p = next;
    return ec == std::errc{};
  };
  return number(ran_ns) && number(waited_ns);
}

bool idle_priority(pid_t id) { return ::sched_getscheduler(id) == SCHED_IDLE; }

}  // namespace

int gather_cpu(const std::vector<int>& allowed, const std::vector<int>& disk_irq_cpus) {
  for (int cpu : allowed)
    if (std::find(disk_irq_cpus.begin(), disk_irq_cpus.end(), cpu) != disk_irq_cpus.end()) return cpu;
  return allowed.empty() ? -1 : allowed.front();
}

placement_policy::move placement_policy::next(const placement_sample& s, clock::time_point now) {
  const bool few_sending = s.sending_connections <= most_sending_connections;
  if (gathered_) {
    if (few_sending && s.cpu_cores <= spread_above_cores && s.waiting_threads <= spread_above_waiting)
      return move::stay;
    hold_ = now - gathered_at_ < settled ? std::min<clock::duration>(hold_ * 2, longest_hold) : clock::duration(first_hold);
    gathered_ = false;
    spread_at_ = now;
    quiet_ticks_ = 0;
    return move::spread;
  }
  const bool quiet = few_sending && s.cpu_cores < gather_below_cores;
  quiet_ticks_ = quiet ? quiet_ticks_ + 1 : 0;
  if (quiet_ticks_ < quiet_ticks_to_gather || now - spread_at_ < hold_) return move::stay;
  gathered_ = true;
  gathered_at_ = now;
  quiet_ticks_ = 0;
  return move::gather;
}

cpu_placement::cpu_placement(int gather, std::vector<int> spread, client_activity& activity)
    : gather_(gather), spread_(std::move(spread)), activity_(activity) {
  stats_.gather_cpu = gather_;
  const bool can_gather =
      spread_.size() >= 2 && std::find(spread_.begin(), spread_.end(), gather_) != spread_.end();
  std::uint64_t ran = 0, waited = 0;
  if (!can_gather) return;
  if (!read_schedstat(static_cast<pid_t>(::gettid()), ran, waited)) {
    log::info("runtime.cpu_placement: the kernel keeps no schedstat for threads; they stay spread");
    return;
  }
  thread_ = std::thread([this] { run(); });
}

cpu_placement::~cpu_placement() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void cpu_placement::run() {
  using clock = std::chrono::steady_clock;
  sample(clock::duration::zero());  // the first reference point
  activity_.take_active_connections();
  auto last = clock::now();
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, tick, [this] { return stopping_; })) {
    const auto now = clock::now();
    const auto s = sample(now - last);
    last = now;
    switch (policy_.next(s, now)) {
      case placement_policy::move::stay:
        break;
      case placement_policy::move::gather:
        place({gather_});
        stats_.gatherings.fetch_add(1, std::memory_order_relaxed);
        stats_.gathered.store(true, std::memory_order_release);
        log::debug("threads gathered on one CPU", {{"cpu", std::to_string(gather_)}});
        break;
      case placement_policy::move::spread:
        place(spread_);
        stats_.spreads.fetch_add(1, std::memory_order_relaxed);
        stats_.gathered.store(false, std::memory_order_release);
        log::debug("threads spread over the usable CPUs",
                   {{"cpus", cpu_list(spread_)},
                    {"sending_connections", std::to_string(s.sending_connections)},
                    {"cpu_cores", std::to_string(s.cpu_cores)},
                    {"waiting_threads", std::to_string(s.waiting_threads)},
                    {"next_gathering_after_ms",
                     std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(policy_.hold()).count())}});
        break;
    }
  }
  // Shutdown drains and syncs: with every CPU.
  if (policy_.gathered()) place(spread_);
}

placement_sample cpu_placement::sample(std::chrono::steady_clock::duration over) {
  std::map<pid_t, thread_times> now;
  std::uint64_t ran = 0, waited = 0;
  for (pid_t id : thread_ids()) {
    thread_times t;
    if (idle_priority(id) || !read_schedstat(id, t.ran_ns, t.waited_ns)) continue;
    // A thread first seen now has no reference point yet: it counts from
    // the next tick (a thread gone since the last tick counts no more).
    if (auto before = last_.find(id); before != last_.end()) {
      ran += t.ran_ns - std::min(t.ran_ns, before->second.ran_ns);
      waited += t.waited_ns - std::min(t.waited_ns, before->second.waited_ns);
    }
    now.emplace(id, t);
  }
  last_ = std::move(now);
  const double seconds = std::chrono::duration<double>(over).count();
  if (seconds <= 0) return {};
  return {activity_.take_active_connections(), static_cast<double>(ran) / 1e9 / seconds,
          static_cast<double>(waited) / 1e9 / seconds};
}

void cpu_placement::place(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  // A thread that ends meanwhile answers ESRCH; one refused (a seccomp
  // policy, a CPU taken away) stays where it is. Neither is worth more.
  for (pid_t id : thread_ids())
    if (!idle_priority(id)) ::sched_setaffinity(id, sizeof set, &set);
}

}  // namespace weir
