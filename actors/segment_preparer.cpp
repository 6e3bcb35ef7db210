#include "actors/segment_preparer.hpp"

#include <cstring>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/sec.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/failure_log.hpp"
#include "observability/log.hpp"

namespace weir {

namespace {

struct segment_preparer_state {
  static inline const char* name = "segment_preparer";
  std::string last_failure;  // logged once, not at every rotation
};

using preparer_pointer = segment_preparer_actor::stateful_pointer<segment_preparer_state>;

segment_preparer_actor::behavior_type segment_preparer_behavior(preparer_pointer self,
                                                                segment_preparer_settings s) {
  log_exceptions(self, "segment_preparer");
  return {
      [=](prepare_atom) -> caf::result<spare_ready_atom> {
        int rc = 0;
        while ((rc = s.spares->prepare_one()) > 0) {
        }
        if (rc < 0) {
          const std::string why = std::strerror(-rc);
          if (why != self->state.last_failure)
            log::warn("cannot prepare a spare WAB segment; segments grow as they are written until this clears",
                      {{"error", why}, {"segment_bytes", std::to_string(s.spares->segment_bytes())}});
          self->state.last_failure = why;
        } else if (!self->state.last_failure.empty()) {
          self->state.last_failure.clear();
          log::info("spare WAB segments prepared again", {});
        }
        if (s.spares->held() > 0) return spare_ready_atom::value;
        return caf::make_error(caf::sec::runtime_error, "no spare segment");
      },
  };
}

}  // namespace

segment_preparer_actor spawn_segment_preparer(caf::actor_system& sys, segment_preparer_settings settings) {
  const auto thread = settings.thread;
  return spawn_on(sys, thread, segment_preparer_behavior, std::move(settings));
}

}  // namespace weir
