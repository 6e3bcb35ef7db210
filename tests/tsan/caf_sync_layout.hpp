#pragma once
// The addresses caf_sync.cpp synchronises on (kept apart from it: that file
// defines functions under CAF's own symbol names and includes no CAF header).
namespace weir::tsan {

/// The actor control block of a caf::scheduled_actor (passed as its `this`).
void* scheduled_actor_sync(void* self);
/// The mailbox of a caf::blocking_actor (passed as its `this`).
void* blocking_actor_sync(void* self);
/// The caf::memory_managed base of the message held by a mailbox_element_ptr
/// (passed by address), as request_deletion sees it; null if none.
void* element_sync(void* element_ptr);
/// Whether the caller holds the only strong / weak reference to the actor
/// control block `ctrl` (then dropping it destroys the actor / frees it).
bool last_strong_reference(void* ctrl);
bool last_weak_reference(void* ctrl);
/// Whether the caller holds the only reference to a caf::ref_counted.
bool last_reference(const void* ref_counted);

}  // namespace weir::tsan
