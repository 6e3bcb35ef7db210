#pragma once
// Lets an io thread run the actor its bytes wake, instead of waking a
// scheduler thread for it.
//
// A client's bytes are read on an io thread and handed to its connection
// actor. Handed over with a plain send, an idle connection actor is put on
// CAF's scheduler queue and a scheduler thread is woken to decode the frame:
// one thread wake-up per frame, which on a virtual CPU that halted meanwhile
// costs more than the decoding. Sent with `send_from_io_thread`, the actor
// is given to this thread's execution unit instead (CAF schedules an actor a
// message unblocks on the sender's execution unit), and the io thread runs
// it then and there; what it sends on to the shard writer is unchanged.
// The io thread only runs actors that are on the scheduler already (they
// never block); an actor woken by anyone else still runs there.
//
// Every connection's actor runs here, not only a lone producer's: with the
// shard writer syncing Durable-only groups itself and writing their replies
// (actors/shard_writer.cpp), a Durable record then crosses two threads, the
// io thread and the writer, as in the minimal server weir-bench measures
// against. Before the writer synced itself, decoding every connection here
// only serialized what the io and scheduler threads did side by side; with
// it, many producers gained in records/s and CPU per record (decision 0016).
//
// Jobs that a running actor wakes (another actor it sends to) wait until it
// is done, so a job never runs inside another; the queue is empty whenever
// the unit returns to the io loop.
#include <deque>

#include <caf/abstract_actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/execution_unit.hpp>
#include <caf/resumable.hpp>
#include <caf/send.hpp>

namespace weir {

class io_thread_unit final : public caf::execution_unit {
 public:
  /// Made before the actor system it is given later (`use`): an actor that
  /// last ran here keeps pointing at its unit until the system is gone.
  io_thread_unit() = default;
  io_thread_unit(const io_thread_unit&) = delete;
  io_thread_unit& operator=(const io_thread_unit&) = delete;
  void use(caf::actor_system& sys) { system_ = &sys; }

  /// While it lives, the calling thread's sends through
  /// `send_from_io_thread` run on `unit`; anything else that reaches the
  /// unit goes to the scheduler.
  class bound_here {
   public:
    explicit bound_here(io_thread_unit& unit);
    ~bound_here();
    bound_here(const bound_here&) = delete;
    bound_here& operator=(const bound_here&) = delete;
  };

  void exec_later(caf::resumable* job) override;

  /// The calling thread's unit; null on any other thread.
  static io_thread_unit* current();

  /// How many times an actor ran on this unit.
  std::uint64_t jobs_run() const { return jobs_run_; }

 private:
  void run_jobs();

  std::deque<caf::resumable*> jobs_;
  bool running_ = false;
  std::uint64_t jobs_run_ = 0;
};

/// `caf::anon_send`; but on an io thread, the receiver, if this message
/// wakes it, runs on that thread before this returns. Never call it with a
/// lock held that the receiver may take.
template <class Dest, class... Ts>
void send_from_io_thread(const Dest& dest, Ts&&... xs) {
  using token = caf::detail::type_list<caf::detail::strip_and_convert_t<Ts>...>;
  static_assert(caf::response_type_unbox<caf::signatures_of_t<Dest>, token>::valid,
                "receiver does not accept given message");
  if (dest)
    dest->eq_impl(caf::make_message_id(), nullptr, io_thread_unit::current(),
                  std::forward<Ts>(xs)...);
}

}  // namespace weir
