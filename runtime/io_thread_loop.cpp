#include "runtime/io_thread_loop.hpp"

#include <sched.h>
#include <unistd.h>

namespace weir {

namespace {

bool polling_wanted(const io_spin_policy& policy, std::chrono::steady_clock::time_point now) {
  if (policy.reads && policy.reads->batching.load(std::memory_order_relaxed)) return false;
  return policy.buffered->acked_within(policy.spin, now);
}

}  // namespace

void run_io_thread(boost::asio::io_context& io, const io_spin_policy& policy) {
  using clock = std::chrono::steady_clock;
  if (policy.spin.count() <= 0 || !policy.buffered) {
    io.run();
    return;
  }
  io_spin_stats unused;
  io_spin_stats& stats = policy.stats ? *policy.stats : unused;
  stats.thread.store(::gettid(), std::memory_order_relaxed);
  while (!io.stopped()) {
    if (!polling_wanted(policy, clock::now())) {
      // Sleep until the next handler, as run() does.
      if (io.run_one() == 0) return;
      continue;
    }
    // Poll until a handler runs, or the last Buffered ack is `spin` old.
    const auto started = clock::now();
    auto now = started;
    std::size_t ran = 0;
    // Each empty poll lets whatever else waits for this CPU run first: on a
    // gathered CPU that is the writer with the frame just handed to it
    // (without the yield, a few Buffered producers did worse than with no
    // polling at all: decision 0021).
    while ((ran = io.poll()) == 0 && !io.stopped() && polling_wanted(policy, now = clock::now())) ::sched_yield();
    stats.spun_ns.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(now - started).count(),
                            std::memory_order_relaxed);
    if (ran > 0) {
      stats.caught.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    if (io.stopped()) return;
    stats.expired.fetch_add(1, std::memory_order_relaxed);
    if (io.run_one() == 0) return;
  }
}

}  // namespace weir
