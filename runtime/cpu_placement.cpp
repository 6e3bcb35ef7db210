#include "runtime/cpu_placement.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <set>
#include <string>
#include <utility>

#include "runtime/client_activity.hpp"
#include "runtime/disk_interrupts.hpp"
#include "runtime/whole_number.hpp"
#include "observability/log.hpp"

namespace weir {
namespace {

/// The ids of the process's threads, from /proc/self/task.
std::vector<pid_t> thread_ids() {
  std::vector<pid_t> ids;
  DIR* dir = ::opendir("/proc/self/task");
  if (dir == nullptr) return ids;
  while (const dirent* e = ::readdir(dir)) {
    if (const auto id = whole_number<pid_t>(e->d_name); id && *id > 0) ids.push_back(*id);
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

cpu_placement::cpu_placement(int gather, std::vector<int> spread, client_activity& activity,
                             const io_spin_stats* spin)
    : gather_set_{gather}, spread_(std::move(spread)), activity_(activity), spin_(spin) {
  stats_.gather_cpu = gather;
  std::uint64_t ran = 0, waited = 0;
  if (spread_.size() < 2 || std::find(spread_.begin(), spread_.end(), gather) == spread_.end())
    off_reason_ = "one usable CPU";
  else if (!read_schedstat(static_cast<pid_t>(::gettid()), ran, waited))
    off_reason_ = "no per-thread schedstat in /proc";
  else
    thread_ = std::thread([this] { run(); });
}

cpu_placement::~cpu_placement() { stop(); }

void cpu_placement::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

const std::vector<int>& cpu_placement::current_cpus() const { return policy_.gathered() ? gather_set_ : spread_; }

void cpu_placement::run() {
  using clock = std::chrono::steady_clock;
  std::vector<pid_t> born;
  sample(clock::duration::zero(), born);  // the first reference point
  activity_.take_active_connections();
  auto last = clock::now();
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, tick, [this] { return stopping_; })) {
    const auto now = clock::now();
    born.clear();
    const auto s = sample(now - last, born);
    last = now;
    // A thread started by one that was not yet moved has the old affinity.
    place_threads(born, current_cpus());
    const auto move = policy_.next(s, now);
    if (move == placement_policy::move::stay) continue;
    if (!place(current_cpus())) {
      policy_.move_failed();  // tried again at the next tick that calls for it
      if (!std::exchange(warned_, true))
        log::warn("runtime.cpu_placement: the daemon's threads could not all be moved; trying again, and "
                  "runtime.cpu_placement: spread stops it");
      continue;
    }
    if (move == placement_policy::move::gather) {
      stats_.gatherings.fetch_add(1, std::memory_order_relaxed);
      stats_.gathered.store(true, std::memory_order_release);
      log::debug("threads gathered on one CPU",
                 {{"cpu", std::to_string(gather_set_.front())},
                  {"sending_connections", std::to_string(s.sending_connections)},
                  {"cpu_cores", std::to_string(s.cpu_cores)},
                  {"waiting_threads", std::to_string(s.waiting_threads)}});
    } else {
      stats_.spreads.fetch_add(1, std::memory_order_relaxed);
      stats_.gathered.store(false, std::memory_order_release);
      log::debug("threads spread over the usable CPUs",
                 {{"cpus", cpu_list(spread_)},
                  {"sending_connections", std::to_string(s.sending_connections)},
                  {"cpu_cores", std::to_string(s.cpu_cores)},
                  {"waiting_threads", std::to_string(s.waiting_threads)},
                  {"next_gathering_after_ms",
                   std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(policy_.hold()).count())}});
    }
  }
  // Whatever happens after stop() gets every CPU.
  if (policy_.gathered() && place(spread_)) stats_.gathered.store(false, std::memory_order_release);
}

placement_sample cpu_placement::sample(std::chrono::steady_clock::duration over, std::vector<pid_t>& born) {
  std::map<pid_t, thread_times> now;
  std::uint64_t ran = 0, waited = 0;
  const pid_t polling = spin_ ? spin_->thread.load(std::memory_order_relaxed) : 0;
  thread_times poller;  // the polling io thread's share of this tick
  for (pid_t id : thread_ids()) {
    thread_times t;
    if (!read_schedstat(id, t.ran_ns, t.waited_ns)) continue;
    // A thread first seen now has no reference point yet: it counts from
    // the next tick (a thread gone since the last tick counts no more).
    if (auto before = last_.find(id); before != last_.end()) {
      const std::uint64_t r = t.ran_ns - std::min(t.ran_ns, before->second.ran_ns);
      const std::uint64_t w = t.waited_ns - std::min(t.waited_ns, before->second.waited_ns);
      ran += r;
      waited += w;
      if (id == polling) poller = {r, w};
    } else {
      born.push_back(id);
    }
    now.emplace(id, t);
  }
  last_ = std::move(now);
  // The io thread's polling after Buffered acks (io_thread_loop.hpp) is
  // time it would otherwise sleep. Counted as load, it spread a lone
  // Buffered producer's daemon and lost what the polling buys (decision
  // 0021). The polling is counted in wall time: what of it
  // the thread spent waiting for the CPU (while the writer ran) was no CPU
  // it used, and it used no more than the io thread ran.
  if (spin_) {
    const std::uint64_t spun = spin_->spun_ns.load(std::memory_order_relaxed);
    const std::uint64_t wall = spun - last_spun_ns_;
    last_spun_ns_ = spun;
    const std::uint64_t polled = std::min(poller.ran_ns, wall - std::min(wall, poller.waited_ns));
    ran -= std::min(ran, polled);
  }
  const double seconds = std::chrono::duration<double>(over).count();
  if (seconds <= 0) return {};
  return {activity_.take_active_connections(), static_cast<double>(ran) / 1e9 / seconds,
          static_cast<double>(waited) / 1e9 / seconds};
}

bool cpu_placement::place_threads(const std::vector<pid_t>& ids, const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  bool all = true;
  // A thread that ended meanwhile answers ESRCH and is no failure.
  for (pid_t id : ids)
    if (::sched_setaffinity(id, sizeof set, &set) != 0 && errno != ESRCH) all = false;
  return all;
}

bool cpu_placement::place(const std::vector<int>& cpus) {
  std::set<pid_t> moved;
  for (int pass = 0; pass < 8; ++pass) {
    const auto ids = thread_ids();
    if (ids.empty()) return false;  // /proc/self/task unreadable (out of descriptors?)
    std::vector<pid_t> fresh;
    for (pid_t id : ids)
      if (moved.insert(id).second) fresh.push_back(id);
    if (fresh.empty()) return true;
    if (!place_threads(fresh, cpus)) return false;
  }
  return true;  // threads keep being started; the next tick's newcomers are placed then
}

}  // namespace weir
