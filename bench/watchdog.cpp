#include "bench/watchdog.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

namespace weir::bench {

namespace {

std::mutex mu;
std::string current_step = "starting";
std::map<pid_t, std::string> daemons;  // pid -> log path

void print_tail(const std::string& path, std::size_t lines) {
  std::ifstream in(path);
  std::deque<std::string> last;
  for (std::string line; std::getline(in, line);) {
    last.push_back(std::move(line));
    if (last.size() > lines) last.pop_front();
  }
  for (const auto& l : last) std::fprintf(stderr, "  | %s\n", l.c_str());
}

[[noreturn]] void expire(double seconds) {
  std::lock_guard lock(mu);
  std::fprintf(stderr, "weir-bench: run failed: still running after the --deadline of %g s, during: %s\n", seconds,
               current_step.c_str());
  for (const auto& [pid, log] : daemons) {
    std::fprintf(stderr, "weir-bench: weir-server pid %d, the end of %s:\n", static_cast<int>(pid), log.c_str());
    print_tail(log, 40);
  }
  for (const auto& [pid, log] : daemons) ::kill(pid, SIGKILL);
  std::fflush(stderr);
  std::fflush(stdout);
  ::_exit(1);
}

}  // namespace

void arm_deadline(double seconds) {
  static bool armed = false;
  if (seconds <= 0 || armed) return;
  armed = true;
  std::thread([seconds] {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    expire(seconds);
  }).detach();
}

void note_step(const std::string& step) {
  std::lock_guard lock(mu);
  current_step = step;
}

void track_daemon(pid_t pid, const std::string& log_path) {
  std::lock_guard lock(mu);
  daemons[pid] = log_path;
}

void untrack_daemon(pid_t pid) {
  std::lock_guard lock(mu);
  daemons.erase(pid);
}

}  // namespace weir::bench
