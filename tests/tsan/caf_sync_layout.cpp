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

void release_strong(void* ctrl) {
  auto* x = static_cast<caf::actor_control_block*>(ctrl);
  if (x->strong_refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    x->data_dtor(x->get());
    caf::intrusive_ptr_release_weak(x);
  }
}

void release_weak(void* ctrl) {
  auto* x = static_cast<caf::actor_control_block*>(ctrl);
  if (x->weak_refs == 1 || x->weak_refs.fetch_sub(1, std::memory_order_acq_rel) == 1) x->block_dtor(x);
}

namespace {

// ref_counted::rc_ is protected (and mutable, which a pointer to member does
// not carry): a pointer to it, taken in a derived class.
struct count_of : caf::ref_counted {
  static constexpr auto member = &count_of::rc_;
};

}  // namespace

void deref(const void* ref_counted) {
  auto* x = static_cast<const caf::ref_counted*>(ref_counted);
  if (x->unique()) {
    x->request_deletion(false);
    return;
  }
  if ((const_cast<caf::ref_counted*>(x)->*count_of::member).fetch_sub(1, std::memory_order_acq_rel) == 1) x->request_deletion(true);
}

}  // namespace weir::tsan
