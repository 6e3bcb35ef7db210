#include "daemon/reload_runner.hpp"

#include "files/time_limit.hpp"

namespace weir {

reload_runner::reload_runner(std::function<void()> reload) : reload_(std::move(reload)), thread_([this] { run(); }) {}

reload_runner::~reload_runner() { stop(); }

bool reload_runner::request() {
  std::lock_guard<std::mutex> guard(mutex_);
  if (stopping_) return false;
  const bool now = !running_;
  asked_ = true;
  changed_.notify_all();
  return now;
}

void reload_runner::stop() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
    // A reload reads its files one after another: each read it starts until
    // it ends is given up on, so that it ends within moments.
    while (running_) {
      lock.unlock();
      give_up_file_reads_in_progress();
      lock.lock();
      changed_.wait_for(lock, std::chrono::milliseconds(20), [&] { return !running_; });
    }
  }
  if (thread_.joinable()) thread_.join();
}

int reload_runner::finished() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return finished_;
}

void reload_runner::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return asked_ || stopping_; });
    if (stopping_) return;
    asked_ = false;
    running_ = true;
    lock.unlock();
    reload_();
    lock.lock();
    running_ = false;
    ++finished_;
    changed_.notify_all();
  }
}

}  // namespace weir
