#include "soak/cycle_runner.hpp"

#include <signal.h>

#include <thread>

namespace weir::soak {

namespace {

constexpr std::chrono::seconds reap_timeout{10};

cycle_outcome failed(const std::string& why, const soak_daemon& d) {
  return {false, why + "\n--- daemon log (this run, last lines):\n" + tail(d.run_log(), 30)};
}

/// SIGKILL, then wait for the process to be gone.
cycle_outcome kill_and_reap(soak_daemon& d, const std::string& when) {
  d.signal(SIGKILL);
  const auto status = d.reap(reap_timeout);
  if (!status) return failed("daemon did not die within 10 s of SIGKILL (" + when + ")", d);
  // Any other status means it had already exited by itself: a crash or a
  // refused start, which the soak must not take for its own kill.
  if (*status != 128 + SIGKILL)
    return failed("daemon exited with status " + std::to_string(*status) + " before the SIGKILL (" + when + ")", d);
  return {};
}

}  // namespace

std::string tail(const std::string& log, std::size_t lines) {
  std::size_t at = log.size();
  if (at > 0 && log[at - 1] == '\n') --at;  // the final newline ends the last line, it starts none
  for (std::size_t seen = 0; at > 0; --at)
    if (log[at - 1] == '\n' && ++seen == lines) break;
  return log.substr(at);
}

cycle_outcome run_cycle(soak_daemon& d, const cycle_plan& plan, std::uint32_t cycle, const options& o,
                        fault_counts& counts, startup_clock& startup) {
  const std::string name = "cycle " + std::to_string(cycle);
  if (plan.recovery_kill) {
    const auto delay = std::chrono::duration_cast<std::chrono::microseconds>(startup.typical * *plan.recovery_kill);
    d.start(name + ": start, SIGKILL " + std::to_string(delay.count()) + "us later");
    ++counts.starts;
    std::this_thread::sleep_for(delay);
    if (auto r = kill_and_reap(d, "during startup"); !r.ok) return r;
    ++counts.recovery_kills;
    const std::string log = d.run_log();
    if (log.find("WAB recovered") == std::string::npos) ++counts.recovery_kills_before_recovered;
    if (log.find("weir-server ready") == std::string::npos) ++counts.recovery_kills_before_ready;
  }

  d.start(name + ": start (" + describe(plan) + ")");
  ++counts.starts;
  const auto forked = std::chrono::steady_clock::now();
  if (!d.wait_ready(o.ready_timeout))
    return failed("daemon not ready within " + std::to_string(o.ready_timeout.count()) + " ms after a restart", d);
  startup.observe(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - forked));

  // Producers reconnect on their own; the load phase is just time passing.
  auto load_left = plan.load;
  if (plan.pause) {
    std::this_thread::sleep_for(plan.pause->at);
    load_left -= plan.pause->at;
    d.signal(SIGSTOP);
    ++counts.freezes;
    std::this_thread::sleep_for(plan.pause->length);
    if (plan.pause->kill_while_frozen) {
      ++counts.kills_while_frozen;
      return kill_and_reap(d, "while stopped");
    }
    d.signal(SIGCONT);
  }
  std::this_thread::sleep_for(load_left);
  return kill_and_reap(d, "under load");
}

}  // namespace weir::soak
