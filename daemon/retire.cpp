#include "daemon/retire.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

#include "observability/delivery_status.hpp"
#include "observability/log.hpp"

namespace weir {

namespace {

/// "db 0, hook 2863 (down: connecting to ...)": each sink's records left.
std::string left_per_sink(const metrics& stats, const std::vector<metrics::sink_state>& sinks) {
  std::string out;
  for (std::size_t k = 0; k < stats.sinks(); ++k) {
    out += std::string(out.empty() ? "" : ", ") + stats.sink_name(k) + " " + std::to_string(stats.lag(k));
    if (k < sinks.size() && sinks[k].delivery && stats.lag(k) > 0) {
      const auto d = sinks[k].delivery->read();
      if (d.health != sink_health::healthy) {
        out += " (" + std::string(name_of(d.health));
        out += d.last_error.empty() ? ")" : ": " + d.last_error + ")";
      }
    }
  }
  return out;
}

std::uint64_t records_left(const metrics& stats) { return stats.lag(stats.furthest_behind()); }

}  // namespace

bool deliver_everything(const sigset_t& signals, const metrics& stats, const std::vector<metrics::sink_state>& sinks) {
  using clock = std::chrono::steady_clock;
  const auto started = clock::now();
  auto said = started;
  log::info("retiring: pushes are no longer taken; delivering every record to every sink, then stopping",
            {{"records_left", std::to_string(records_left(stats))}, {"per_sink", left_per_sink(stats, sinks)}});
  const timespec look{0, 100'000'000};  // 100 ms
  while (records_left(stats) > 0) {
    const int sig = sigtimedwait(&signals, nullptr, &look);
    if (sig == SIGTERM || sig == SIGINT) {
      log::warn("retiring cut short: stopping with records not yet delivered (they are delivered after the next start)",
                {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"},
                 {"records_left", std::to_string(records_left(stats))},
                 {"per_sink", left_per_sink(stats, sinks)}});
      return false;
    }
    if (clock::now() - said >= std::chrono::seconds(10)) {
      said = clock::now();
      log::info("retiring: still delivering", {{"records_left", std::to_string(records_left(stats))},
                                                {"per_sink", left_per_sink(stats, sinks)}});
    }
  }
  char took[32];
  std::snprintf(took, sizeof took, "%.1f", std::chrono::duration<double>(clock::now() - started).count());
  log::info("retiring: every record is delivered to every sink; stopping", {{"took_s", took}});
  return true;
}

}  // namespace weir
