#include "soak/cycle_plan.hpp"

namespace weir::soak {

namespace {

std::int64_t uniform(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

}  // namespace

cycle_plan plan_cycle(std::mt19937_64& rng, const options& o) {
  using std::chrono::milliseconds;
  cycle_plan p;
  // One cycle in four is killed during startup too.
  if (uniform(rng, 0, 3) == 0) p.recovery_kill = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  p.load = milliseconds(uniform(rng, o.min_load.count(), o.max_load.count()));
  // One cycle in four freezes the daemon mid-load; pauses longer than the
  // producers' reply timeout make them give up and reconnect.
  if (uniform(rng, 0, 3) == 0) {
    freeze f;
    f.at = milliseconds(uniform(rng, 0, p.load.count()));
    f.length = milliseconds(uniform(rng, 20, 1500));
    f.kill_while_frozen = uniform(rng, 0, 3) == 0;
    p.pause = f;
  }
  return p;
}

std::string describe(const cycle_plan& p) {
  std::string s;
  if (p.recovery_kill) s += "kill at " + std::to_string(static_cast<int>(*p.recovery_kill * 100)) + "% of startup, ";
  s += "load " + std::to_string(p.load.count()) + "ms";
  if (p.pause) {
    s += ", SIGSTOP at " + std::to_string(p.pause->at.count()) + "ms for " + std::to_string(p.pause->length.count()) +
         "ms";
    if (p.pause->kill_while_frozen) s += " then SIGKILL while stopped";
  }
  return s;
}

}  // namespace weir::soak
