#include "runtime/io_thread_unit.hpp"

#include <limits>

#include <caf/scheduler/abstract_coordinator.hpp>

namespace weir {

namespace {

thread_local io_thread_unit* this_thread_unit = nullptr;

// As many messages as the actor has: the io thread goes back to its sockets
// once the actors it woke wait for their next message.
constexpr std::size_t max_throughput = std::numeric_limits<std::size_t>::max();

}  // namespace

io_thread_unit::bound_here::bound_here(io_thread_unit& unit) { this_thread_unit = &unit; }

io_thread_unit::bound_here::~bound_here() { this_thread_unit = nullptr; }

io_thread_unit* io_thread_unit::current() { return this_thread_unit; }

void io_thread_unit::exec_later(caf::resumable* job) {
  // Only the scheduler's own kind of job: anything else (a broker of the
  // middleman) goes where it would have gone.
  if (job->subtype() != caf::resumable::scheduled_actor || this_thread_unit != this) {
    system().scheduler().enqueue(job);
    return;
  }
  jobs_.push_back(job);
  if (!running_) run_jobs();
}

// As CAF's scheduler workers do with a job's answer, but for `resume_later`:
// a job with messages left goes behind the others on this unit.
void io_thread_unit::run_jobs() {
  running_ = true;
  while (!jobs_.empty()) {
    caf::resumable* job = jobs_.front();
    jobs_.pop_front();
    ++jobs_run_;
    switch (job->resume(this, max_throughput)) {
      case caf::resumable::resume_later:
        jobs_.push_back(job);
        break;
      case caf::resumable::done:
      case caf::resumable::awaiting_message:
        intrusive_ptr_release(job);
        break;
      case caf::resumable::shutdown_execution_unit:
        break;  // only a scheduler's own shutdown job says so
    }
  }
  running_ = false;
}

}  // namespace weir
