#include "daemon/io_thread_loop.hpp"

namespace weir {

void run_io_thread(boost::asio::io_context& io, const io_spin_policy& policy) {
  using clock = std::chrono::steady_clock;
  if (policy.spin.count() <= 0 || !policy.buffered) {
    io.run();
    return;
  }
  io_spin_stats unused;
  io_spin_stats& stats = policy.stats ? *policy.stats : unused;
  while (!io.stopped()) {
    if (!policy.buffered->acked_within(policy.spin)) {
      // Nothing Buffered lately: sleep until the next handler, as run() does.
      if (io.run_one() == 0) return;
      continue;
    }
    // Poll until a handler runs or `spin` passes without one.
    const auto started = clock::now();
    auto now = started;
    std::size_t ran = 0;
    while ((ran = io.poll()) == 0 && !io.stopped() && now - started < policy.spin) now = clock::now();
    stats.spun_ns.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(now - started).count(),
                            std::memory_order_relaxed);
    if (ran > 0) {
      stats.caught.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    stats.expired.fetch_add(1, std::memory_order_relaxed);
    if (io.stopped() || io.run_one() == 0) return;
  }
}

}  // namespace weir
