#include "tests/tsan/caf_sync_layout.hpp"

#include <caf/actor_control_block.hpp>
#include <caf/blocking_actor.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/memory_managed.hpp>
#include <caf/ref_counted.hpp>
#include <caf/scheduled_actor.hpp>

namespace weir::tsan {

void* scheduled_actor_sync(void* self) {
  auto* actor = static_cast<caf::abstract_actor*>(static_cast<caf::scheduled_actor*>(self));
  return caf::actor_control_block::from(actor);
}

void* blocking_actor_sync(void* self) { return &static_cast<caf::blocking_actor*>(self)->mailbox(); }

void* element_sync(void* element_ptr) {
  const auto& p = *static_cast<caf::mailbox_element_ptr*>(element_ptr);
  return p ? const_cast<caf::memory_managed*>(static_cast<const caf::memory_managed*>(p.get())) : nullptr;
}

bool last_strong_reference(void* ctrl) { return static_cast<caf::actor_control_block*>(ctrl)->strong_refs.load() == 1; }

bool last_weak_reference(void* ctrl) { return static_cast<caf::actor_control_block*>(ctrl)->weak_refs.load() == 1; }

bool last_reference(const void* ref_counted) {
  return static_cast<const caf::ref_counted*>(ref_counted)->get_reference_count() == 1;
}

}  // namespace weir::tsan
