// The bridge's middleman actor (transport/cluster_bridge.hpp) is a CAF
// middleman_actor_impl, which ignores every exit but kill: stopping the
// bridge must really end it, or the actor system's teardown is left to.
#include <chrono>

#include <catch2/catch.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>

#include "transport/cluster_bridge.hpp"

using namespace weir;

TEST_CASE("stopping the cluster bridge ends its middleman actor before the actor system goes", "[cluster]") {
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 1);
  cfg.load<caf::io::middleman>();
  caf::actor_system sys{cfg};
  cluster_bridge bridge(sys);
  const auto middleman = bridge.middleman();
  REQUIRE(middleman);
  caf::scoped_actor watcher{sys};
  watcher->monitor(middleman);
  bridge.stop();
  bool ended = false;
  watcher->receive([&](const caf::down_msg& down) { ended = down.source == middleman.address(); },
                   caf::after(std::chrono::seconds(10)) >> [] {});
  CHECK(ended);
}
