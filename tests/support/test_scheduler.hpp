#pragma once
// An actor system on CAF's test scheduler, for deterministic actor tests:
// every actor spawned without a thread of its own runs in the test's thread,
// one message at a time, and timers fire only when the test moves the clock.
#include <chrono>
#include <memory>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include "messages/cluster_protocol.hpp"
#include "messages/ingest_protocol.hpp"

namespace weir::test {

class test_scheduler {
 public:
  test_scheduler() {
    cfg_.set("scheduler.policy", caf::atom("testing"));
    cfg_.add_message_types<caf::id_block::weir>();
    cfg_.add_message_types<caf::id_block::weir_cluster>();
    sys_ = std::make_unique<caf::actor_system>(cfg_);
    sched_ = &dynamic_cast<caf::scheduler::test_coordinator&>(sys_->scheduler());
  }

  caf::actor_system& sys() { return *sys_; }
  caf::scheduler::test_coordinator& sched() { return *sched_; }

  /// Delivers every message waiting, and those they cause, until all is quiet.
  void run() {
    while (sched_->try_run_once()) {
    }
  }
  /// Moves the test clock on, firing the timers that fall due, and runs.
  void advance(std::chrono::milliseconds d) {
    sched_->advance_time(d);
    run();
  }
  /// Runs only `who`: what it sends others waits in their mailboxes.
  template <class Handle>
  void run_only(const Handle& who) {
    while (sched_->prioritize(who)) sched_->run_once();
  }

 private:
  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  caf::scheduler::test_coordinator* sched_ = nullptr;
};

}  // namespace weir::test
