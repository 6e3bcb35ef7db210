// runtime/io_thread_unit.hpp: an actor woken from an io thread runs on that
// thread, before the send returns, and what it wakes in turn runs after it,
// not inside it; from a thread without a unit the actor runs on CAF's
// scheduler as after any send.
#include <catch2/catch.hpp>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>

#include "runtime/io_thread_unit.hpp"

using namespace weir;

namespace {

// Where each message ran, and in which order the handlers began and ended.
struct trace {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::thread::id> threads;
  std::vector<std::string> events;
  void add(std::string e) {
    std::lock_guard<std::mutex> guard(mutex);
    threads.push_back(std::this_thread::get_id());
    events.push_back(std::move(e));
    changed.notify_all();
  }
};

caf::behavior recorder(caf::event_based_actor*, trace* t, std::string name) {
  return {[=](int) { t->add(name); }};
}

// Forwards to `next`, then records: a nested run would record `next` first.
caf::behavior forwarder(caf::event_based_actor* self, trace* t, caf::actor next) {
  return {[=](int x) {
    t->add("forwarder begins");
    self->send(next, x);
    t->add("forwarder ends");
  }};
}

}  // namespace

TEST_CASE("io thread unit: a woken actor runs on the sending thread and what it wakes runs after it") {
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 1);
  caf::actor_system sys{cfg};
  trace t;
  // Lazily started: an actor spawned is first run by the scheduler, and a
  // message that finds it still starting would not wake it.
  auto last = sys.spawn<caf::lazy_init>(recorder, &t, std::string("recorder"));
  auto first = sys.spawn<caf::lazy_init>(forwarder, &t, last);

  std::uint64_t runs = 0;
  bool bound_to_io = false;
  std::vector<std::string> at_return;  // what had run when the send returned
  std::vector<std::thread::id> ran_on;
  std::thread::id io_id;
  io_thread_unit unit;
  unit.use(sys);
  std::thread io([&] {
    io_id = std::this_thread::get_id();
    io_thread_unit::bound_here bound(unit);
    bound_to_io = io_thread_unit::current() == &unit;
    send_from_io_thread(first, 1);
    std::lock_guard<std::mutex> guard(t.mutex);
    at_return = t.events;
    ran_on = t.threads;
    runs = unit.jobs_run();
  });
  io.join();
  CHECK(bound_to_io);
  // Both ran before the send returned, on the io thread, one after the other.
  CHECK(at_return == std::vector<std::string>{"forwarder begins", "forwarder ends", "recorder"});
  CHECK(ran_on.size() == 3);
  for (const auto& id : ran_on) CHECK(id == io_id);
  CHECK(runs == 2);
  CHECK(io_thread_unit::current() == nullptr);

  // From a thread that is no io thread: the scheduler runs both, as after
  // anon_send, and no unit runs anything.
  t.events.clear();
  t.threads.clear();
  std::thread::id other_id;
  std::thread other([&] {
    other_id = std::this_thread::get_id();
    send_from_io_thread(first, 2);
  });
  other.join();
  CHECK(unit.jobs_run() == runs);
  std::unique_lock<std::mutex> lock(t.mutex);
  REQUIRE(t.changed.wait_for(lock, std::chrono::seconds(10), [&] { return t.events.size() == 3; }));
  for (const auto& id : t.threads) CHECK(id != other_id);
  lock.unlock();
  caf::anon_send_exit(first, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(last, caf::exit_reason::user_shutdown);
}
