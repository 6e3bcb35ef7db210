// weir-ctl top: the status view redrawn in place every interval while
// stdout is a terminal; one snapshot when it is not (a pipe, a file).
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>

#include <nlohmann/json.hpp>

#include "tools/ctl_commands.hpp"
#include "tools/ctl_status_view.hpp"
#include "weir/admin_http.hpp"

namespace weir::ctl {

namespace {

/// The view of one status fetch, or why there is none; `rc` the exit status
/// it is worth (0, 1 a bad answer, 2 no admin server).
std::string snapshot(const options& o, int& rc) {
  rc = 1;
  try {
    const auto res = client::admin_get(o.admin, "/api/v1/status");
    if (res.status != 200) return "the admin server at " + o.admin + " answered " + std::to_string(res.status) + "\n";
    auto view = render_status(nlohmann::json::parse(res.body));
    rc = 0;
    return view;
  } catch (const client::client_error& e) {
    if (e.kind() == client::error_kind::unreachable) rc = 2;
    return "cannot reach the admin server at " + o.admin + ": " + e.what() +
           " (is weir-server running with admin.listen there? pass --admin HOST:PORT)\n";
  } catch (const nlohmann::json::exception& e) {
    return "the admin server at " + o.admin + " did not answer a weir status document (" + e.what() +
           "); is --admin right?\n";
  }
}

}  // namespace

namespace {

termios terminal_as_it_was{};

/// Ctrl-C or a kill while keys are unbuffered: the terminal as it was, then
/// the signal's own end.
void restore_terminal_and_die(int sig) {
  ::tcsetattr(STDIN_FILENO, TCSANOW, &terminal_as_it_was);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

/// The terminal's keys one at a time, not echoed, while top runs (when
/// standard input is a terminal); as it was again afterwards, however top
/// ends.
class keys_unbuffered {
 public:
  keys_unbuffered() {
    if (::isatty(STDIN_FILENO) == 0 || ::tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    terminal_as_it_was = saved_;
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::signal(sig, restore_terminal_and_die);
    termios raw = saved_;
    raw.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO));
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    active_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  ~keys_unbuffered() {
    if (active_) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
  keys_unbuffered(const keys_unbuffered&) = delete;
  keys_unbuffered& operator=(const keys_unbuffered&) = delete;

  /// Waits `wait`; true when q (or Q) was pressed meanwhile. Without a
  /// terminal on standard input, only waits.
  bool quit_within(std::chrono::milliseconds wait) const {
    const auto until = std::chrono::steady_clock::now() + wait;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      if (!active_) {
        std::this_thread::sleep_for(left);
        return false;
      }
      pollfd in{STDIN_FILENO, POLLIN, 0};
      if (::poll(&in, 1, static_cast<int>(left.count())) <= 0) continue;
      char c = 0;
      if (::read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q')) return true;
    }
  }

 private:
  termios saved_{};
  bool active_ = false;
};

}  // namespace

const char* const top_help = R"(Usage: weir-ctl top [--interval MS] [--once]

A live view of the daemon, redrawn in place (like top): ingest, acked and
delivered rates, ack latency p50/p99, records per fsync, the WAB against its
cap, the sink's health and last error, the oldest undelivered record and the
last sink commit, connections, dead letters, and each shard's lag. Read from
the admin server (--admin). When standard output is not a terminal it prints
one snapshot and exits; with --json it prints the status document once (as
weir-ctl --json status). q or Ctrl-C quits.

Exit status: 0; 1 the admin server gave no status document; 2 it cannot be
reached.

Options:
  --interval MS   time between refreshes (default 1000, from 100 to 60000)
  --once          print one snapshot and exit

Examples:
  weir-ctl top
  weir-ctl --admin 10.0.0.5:9185 top --interval 5000
  weir-ctl top --once > weir-status.txt
)";

int top_command(const options& o, const std::vector<std::string>& args) {
  long interval_ms = 1000;
  bool once = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--once") {
      once = true;
    } else if (args[i] == "--interval") {
      if (++i >= args.size()) return usage_error("top", "--interval needs a number of milliseconds");
      char* end = nullptr;
      interval_ms = std::strtol(args[i].c_str(), &end, 10);
      if (*end != '\0' || interval_ms < 100 || interval_ms > 60000)
        return usage_error("top", "--interval " + args[i] + ": expected milliseconds from 100 to 60000");
    } else {
      return usage_error("top", "unknown option " + args[i]);
    }
  }
  // --json: the status document itself, once (what a script wants of top).
  if (o.json) return admin_get(o.admin, "/api/v1/status", nullptr, true);
  int rc = 0;
  if (once || ::isatty(STDOUT_FILENO) == 0) {
    const auto view = snapshot(o, rc);
    std::fputs(view.c_str(), rc == 0 ? stdout : stderr);
    return rc;
  }
  const keys_unbuffered keys;
  std::fputs("\x1b[2J", stdout);  // a clean screen under the first frame
  for (;;) {
    const auto view = snapshot(o, rc);
    // Home, draw, then clear what an earlier, longer frame left below.
    std::printf("\x1b[H%s — %s, every %.1f s, q quits\x1b[K\n\n", "weir-ctl top", o.admin.c_str(),
                static_cast<double>(interval_ms) / 1000);
    std::string frame;
    for (char c : view) {
      if (c == '\n') frame += "\x1b[K";
      frame += c;
    }
    std::fputs(frame.c_str(), stdout);
    std::fputs("\x1b[J", stdout);
    std::fflush(stdout);
    if (keys.quit_within(std::chrono::milliseconds(interval_ms))) {
      std::fputs("\n", stdout);
      return 0;
    }
  }
}

}  // namespace weir::ctl
