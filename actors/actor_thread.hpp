#pragma once
// Where an actor that blocks (file I/O, a sink client) runs. The daemon gives
// each its own thread, so a blocking call never holds up CAF's shared
// scheduler; deterministic tests run them on the test scheduler instead,
// where every message is delivered by the test, one at a time.
#include <openssl/crypto.h>

#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/spawn_options.hpp>

namespace weir {

enum class actor_thread { own, scheduler };

template <class F, class... Ts>
auto spawn_on(caf::actor_system& sys, actor_thread where, F fun, Ts&&... xs) {
  if (where == actor_thread::scheduler) return sys.spawn(fun, std::forward<Ts>(xs)...);
  auto actor = sys.spawn<caf::detached>(fun, std::forward<Ts>(xs)...);
  // OpenSSL keeps per-thread state (the error queue of the record-id and TLS
  // code) that it frees when the thread exits. The actor system stops
  // waiting for a detached actor's thread just before that thread exits, so
  // the process can end first and the state is never freed (a leak report
  // under LeakSanitizer). Freed when the actor ends, on its own thread.
  caf::actor_cast<caf::abstract_actor*>(actor)->attach_functor([] { OPENSSL_thread_stop(); });
  return actor;
}

}  // namespace weir
