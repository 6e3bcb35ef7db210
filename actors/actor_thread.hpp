#pragma once
// Where an actor that blocks (file I/O, a sink client) runs. The daemon gives
// each its own thread, so a blocking call never holds up CAF's shared
// scheduler; deterministic tests run them on the test scheduler instead,
// where every message is delivered by the test, one at a time.
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/spawn_options.hpp>

namespace weir {

enum class actor_thread { own, scheduler };

template <class F, class... Ts>
auto spawn_on(caf::actor_system& sys, actor_thread where, F fun, Ts&&... xs) {
  if (where == actor_thread::own) return sys.spawn<caf::detached>(fun, std::forward<Ts>(xs)...);
  return sys.spawn(fun, std::forward<Ts>(xs)...);
}

}  // namespace weir
