#pragma once
// What caf_sync.cpp needs from CAF's types (kept apart from it: that file
// defines functions under CAF's own symbol names and includes no CAF header).
namespace weir::tsan {

/// The actor control block of a caf::scheduled_actor (passed as its `this`).
void* scheduled_actor_sync(void* self);
/// The mailbox of a caf::blocking_actor (passed as its `this`).
void* blocking_actor_sync(void* self);
/// The caf::memory_managed base of the message held by a mailbox_element_ptr
/// (passed by address), as request_deletion sees it; null if none.
void* element_sync(void* element_ptr);
/// caf::intrusive_ptr_release(actor_control_block*),
/// caf::intrusive_ptr_release_weak(actor_control_block*) and
/// caf::ref_counted::deref(), as CAF 0.17 implements them.
void release_strong(void* ctrl);
void release_weak(void* ctrl);
void deref(const void* ref_counted);

}  // namespace weir::tsan
