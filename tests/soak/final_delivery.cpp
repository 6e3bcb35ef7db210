#include "soak/final_delivery.hpp"

#include <signal.h>

#include <thread>

#include "soak/cycle_runner.hpp"
#include "soak/sink_audit.hpp"

namespace weir::soak {

namespace {

using clock = std::chrono::steady_clock;

/// Polls the row count until it has stayed the same for `quiet`, or `deadline`.
void wait_until_quiet(const std::filesystem::path& sink, std::chrono::milliseconds quiet, clock::time_point deadline) {
  std::int64_t last = sink_row_count(sink);
  auto since = clock::now();
  while (clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const std::int64_t now = sink_row_count(sink);
    if (now != last) {
      last = now;
      since = clock::now();
    } else if (clock::now() - since >= quiet) {
      return;
    }
  }
}

}  // namespace

final_outcome deliver_and_stop(soak_daemon& d, const std::filesystem::path& sink,
                               const std::function<bool()>& caught_up, std::chrono::milliseconds ready_timeout,
                               std::chrono::milliseconds timeout) {
  final_outcome out;
  const auto began = clock::now();
  d.start("final: start, let delivery catch up, then SIGTERM");
  if (!d.wait_ready(ready_timeout)) {
    return {false, "daemon not ready for the final delivery\n--- daemon log (last lines):\n" + tail(d.run_log(), 30)};
  }
  // A quiet sink alone could be a sink in retry backoff; the check against
  // the acked records decides, the quiet period only spaces out the checks.
  // When nothing has moved for 20 s (well past the 5 ms linger and the
  // early retry backoffs), what is missing is not coming.
  const auto deadline = began + timeout;
  std::int64_t rows_at_check = -2;
  auto rows_changed = clock::now();
  while (true) {
    wait_until_quiet(sink, std::chrono::seconds(2), deadline);
    if (caught_up() || clock::now() >= deadline) break;
    if (const auto rows = sink_row_count(sink); rows != rows_at_check) {
      rows_at_check = rows;
      rows_changed = clock::now();
    } else if (clock::now() - rows_changed >= std::chrono::seconds(20)) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  out.catch_up = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - began);

  d.signal(SIGTERM);
  // shutdown_timeout_ms defaults to 30 s; a daemon still there after 45 s hangs.
  const auto status = d.reap(std::chrono::seconds(45));
  if (!status || *status != 0) {
    out.ok = false;
    out.failure = (status ? "daemon exited with status " + std::to_string(*status) : std::string("daemon did not exit")) +
                  " after SIGTERM\n--- daemon log (last lines):\n" + tail(d.run_log(), 30);
  }
  return out;
}

}  // namespace weir::soak
