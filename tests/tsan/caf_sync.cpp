// ThreadSanitizer builds only (WEIR_TSAN): tells TSan where CAF synchronises.
//
// Debian's libcaf_core is not built with -fsanitize=thread, so the atomics
// with which CAF hands a message from its sender to its receiver, and an
// actor from one scheduler thread to the next, are invisible to TSan. Every
// message and every actor's state would then be reported as a data race
// between weir functions that CAF in fact orders. Suppressing those reports
// would mean suppressing every report with an actor on one side, which would
// hide weir's own races too. Instead, the functions below take the place of
// the CAF functions at those hand-off points (the executable's definition
// interposes on the shared library's, for weir's calls and CAF's own alike),
// tell TSan about the ordering CAF guarantees there, and call CAF's function:
//
//   enqueue / launch              release on the receiving actor and on the
//                                 message (a sender's writes before a send, a
//                                 spawner's before launch)
//   activate / reactivate / finalize
//                                 acquire before, release after    (the actor
//                                 runs on one thread at a time, in mailbox order)
//   blocking actor's fetch_more   acquire on its mailbox after the fetch
//   a message's request_deletion  acquire on the message (whoever drops it, also
//                                 unread when a mailbox closes, saw it sent)
//   actor and ref_counted deref   CAF's code, rebuilt with TSan (its acq_rel
//                                 decrements: whoever drops the last reference
//                                 destroys after every other holder is done)
//
// This mirrors the ordering the atomics inside CAF provide, a little more
// coarsely (a handler acquires every send to its actor made so far, as a
// mailbox fetch takes every message pushed so far); it orders nothing that
// CAF does not hand over. Written for Debian's CAF 0.17: a symbol that is
// missing aborts at its first use, naming it. tests/tsan.supp covers what is
// left inside CAF itself.
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>

#include "tests/tsan/caf_sync_layout.hpp"

namespace {

void* original(const char* symbol) {
  void* f = ::dlsym(RTLD_NEXT, symbol);
  if (!f) {
    std::fprintf(stderr, "tsan caf_sync: %s not found in libcaf_core\n", symbol);
    std::abort();
  }
  return f;
}

#define WEIR_CAF_ORIGINAL(type, symbol) \
  static const auto orig = reinterpret_cast<type>(original(symbol))

}  // namespace

// Each wrapper is defined under the mangled name of the CAF function it
// stands for (from `nm -D libcaf_core.so`), with the same calling convention:
// `this` first; a std::unique_ptr by value is passed by address.
#define WEIR_CAF_WRAPPER(ret, name, symbol, ...) extern "C" ret name(__VA_ARGS__) __asm__(symbol)

// void caf::scheduled_actor::enqueue(mailbox_element_ptr, execution_unit*)
#define SA_ENQUEUE "_ZN3caf15scheduled_actor7enqueueESt10unique_ptrINS_15mailbox_elementENS_6detail8disposerEEPNS_14execution_unitE"
WEIR_CAF_WRAPPER(void, weir_tsan_sa_enqueue, SA_ENQUEUE, void* self, void* element, void* eu);
void weir_tsan_sa_enqueue(void* self, void* element, void* eu) {
  WEIR_CAF_ORIGINAL(void (*)(void*, void*, void*), SA_ENQUEUE);
  if (void* m = weir::tsan::element_sync(element)) __tsan_release(m);
  __tsan_release(weir::tsan::scheduled_actor_sync(self));
  orig(self, element, eu);
}

// void caf::scheduled_actor::launch(execution_unit*, bool lazy, bool hide)
#define SA_LAUNCH "_ZN3caf15scheduled_actor6launchEPNS_14execution_unitEbb"
WEIR_CAF_WRAPPER(void, weir_tsan_sa_launch, SA_LAUNCH, void* self, void* eu, bool lazy, bool hide);
void weir_tsan_sa_launch(void* self, void* eu, bool lazy, bool hide) {
  WEIR_CAF_ORIGINAL(void (*)(void*, void*, bool, bool), SA_LAUNCH);
  __tsan_release(weir::tsan::scheduled_actor_sync(self));
  orig(self, eu, lazy, hide);
}

// bool caf::scheduled_actor::activate(execution_unit*): runs the actor's
// initialisation (make_behavior) on first call.
#define SA_ACTIVATE "_ZN3caf15scheduled_actor8activateEPNS_14execution_unitE"
WEIR_CAF_WRAPPER(bool, weir_tsan_sa_activate, SA_ACTIVATE, void* self, void* eu);
bool weir_tsan_sa_activate(void* self, void* eu) {
  WEIR_CAF_ORIGINAL(bool (*)(void*, void*), SA_ACTIVATE);
  void* sync = weir::tsan::scheduled_actor_sync(self);
  __tsan_acquire(sync);
  const bool r = orig(self, eu);
  __tsan_release(sync);
  return r;
}

// activation_result caf::scheduled_actor::reactivate(mailbox_element&):
// runs the handler for one message.
#define SA_REACTIVATE "_ZN3caf15scheduled_actor10reactivateERNS_15mailbox_elementE"
WEIR_CAF_WRAPPER(int, weir_tsan_sa_reactivate, SA_REACTIVATE, void* self, void* element);
int weir_tsan_sa_reactivate(void* self, void* element) {
  WEIR_CAF_ORIGINAL(int (*)(void*, void*), SA_REACTIVATE);
  void* sync = weir::tsan::scheduled_actor_sync(self);
  __tsan_acquire(sync);
  const int r = orig(self, element);
  __tsan_release(sync);
  return r;
}

// bool caf::scheduled_actor::finalize(): on termination, runs on_exit and
// destroys the actor's state.
#define SA_FINALIZE "_ZN3caf15scheduled_actor8finalizeEv"
WEIR_CAF_WRAPPER(bool, weir_tsan_sa_finalize, SA_FINALIZE, void* self);
bool weir_tsan_sa_finalize(void* self) {
  WEIR_CAF_ORIGINAL(bool (*)(void*), SA_FINALIZE);
  void* sync = weir::tsan::scheduled_actor_sync(self);
  __tsan_acquire(sync);
  const bool r = orig(self);
  __tsan_release(sync);
  return r;
}

// void caf::blocking_actor::enqueue(mailbox_element_ptr, execution_unit*)
// (scoped_actor and other blocking actors)
#define BA_ENQUEUE "_ZN3caf14blocking_actor7enqueueESt10unique_ptrINS_15mailbox_elementENS_6detail8disposerEEPNS_14execution_unitE"
WEIR_CAF_WRAPPER(void, weir_tsan_ba_enqueue, BA_ENQUEUE, void* self, void* element, void* eu);
void weir_tsan_ba_enqueue(void* self, void* element, void* eu) {
  WEIR_CAF_ORIGINAL(void (*)(void*, void*, void*), BA_ENQUEUE);
  if (void* m = weir::tsan::element_sync(element)) __tsan_release(m);
  __tsan_release(weir::tsan::blocking_actor_sync(self));
  orig(self, element, eu);
}

// void caf::blocking_actor::launch(execution_unit*, bool lazy, bool hide)
#define BA_LAUNCH "_ZN3caf14blocking_actor6launchEPNS_14execution_unitEbb"
WEIR_CAF_WRAPPER(void, weir_tsan_ba_launch, BA_LAUNCH, void* self, void* eu, bool lazy, bool hide);
void weir_tsan_ba_launch(void* self, void* eu, bool lazy, bool hide) {
  WEIR_CAF_ORIGINAL(void (*)(void*, void*, bool, bool), BA_LAUNCH);
  __tsan_release(weir::tsan::blocking_actor_sync(self));
  orig(self, eu, lazy, hide);
}

// bool caf::intrusive::fifo_inbox<blocking_actor::mailbox_policy>::fetch_more():
// a blocking actor takes what was enqueued (its sync object is this inbox).
#define BA_FETCH_MORE "_ZN3caf9intrusive10fifo_inboxINS_14blocking_actor14mailbox_policyEE10fetch_moreEv"
WEIR_CAF_WRAPPER(bool, weir_tsan_ba_fetch_more, BA_FETCH_MORE, void* inbox);
bool weir_tsan_ba_fetch_more(void* inbox) {
  WEIR_CAF_ORIGINAL(bool (*)(void*), BA_FETCH_MORE);
  const bool r = orig(inbox);
  __tsan_acquire(inbox);
  return r;
}

// The reference counts. These three CAF functions are replaced outright by
// the same code built with TSan (caf_sync_layout.cpp): their acq_rel
// decrements then order every holder's last use before the destruction that
// the final one runs. (Annotating around CAF's own copies cannot: whether a
// drop is the last is decided inside them, after any annotation before.)

// void caf::intrusive_ptr_release(actor_control_block*): the last strong
// reference destroys the actor.
#define ACB_RELEASE "_ZN3caf21intrusive_ptr_releaseEPNS_19actor_control_blockE"
WEIR_CAF_WRAPPER(void, weir_tsan_acb_release, ACB_RELEASE, void* ctrl);
void weir_tsan_acb_release(void* ctrl) { weir::tsan::release_strong(ctrl); }

// void caf::intrusive_ptr_release_weak(actor_control_block*): the last weak
// reference frees the actor's memory.
#define ACB_RELEASE_WEAK "_ZN3caf26intrusive_ptr_release_weakEPNS_19actor_control_blockE"
WEIR_CAF_WRAPPER(void, weir_tsan_acb_release_weak, ACB_RELEASE_WEAK, void* ctrl);
void weir_tsan_acb_release_weak(void* ctrl) { weir::tsan::release_weak(ctrl); }

// void caf::ref_counted::deref() const: messages and other shared CAF objects.
#define RC_DEREF "_ZNK3caf11ref_counted5derefEv"
WEIR_CAF_WRAPPER(void, weir_tsan_rc_deref, RC_DEREF, const void* self);
void weir_tsan_rc_deref(const void* self) { weir::tsan::deref(self); }

// void caf::memory_managed::request_deletion(bool) const: how a mailbox
// element is destroyed, whether its message was handled or dropped unread
// (a mailbox closed by its actor's termination, a delayed message cancelled).
#define MM_REQUEST_DELETION "_ZNK3caf14memory_managed16request_deletionEb"
WEIR_CAF_WRAPPER(void, weir_tsan_mm_request_deletion, MM_REQUEST_DELETION, const void* self, bool decremented);
void weir_tsan_mm_request_deletion(const void* self, bool decremented) {
  WEIR_CAF_ORIGINAL(void (*)(const void*, bool), MM_REQUEST_DELETION);
  __tsan_acquire(const_cast<void*>(self));
  orig(self, decremented);
}
