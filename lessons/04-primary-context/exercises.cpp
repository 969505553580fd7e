// Lesson 04's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-04
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"
#ifdef __clang__
#pragma clang diagnostic ignored "-Wunused-private-field"  // nor the members the class will use
#endif

namespace ex04 {

// Exercise 1 of 2 (primary-handle): A retain/release handle for the primary context whose count is right after copies and moves
//
// Task: A library keeps the device's primary context alive for as long as any of its objects
// needs it, and its objects are copied and moved around like any value. Write the class
// PrimaryContext (declared in exercises.hpp): the constructor retains dev's primary context (a
// device the driver refuses throws that refusal, as wb::DriverError), the destructor releases what
// the handle holds, a copy (constructed or assigned) holds a retain of its own (a copy of an empty
// handle is empty), and a move hands the retain over, leaving the moved-from handle empty (get()
// returns nullptr, and it releases nothing). device() names the device, also after copies and
// moves. Assigning a handle to itself changes nothing. The primary context is released exactly when
// the last handle that holds it goes. Retaining makes no context current, and nor does the handle:
// making, copying, moving and destroying handles leaves every thread's context stack alone. A
// destructor must not throw.
//
// The check: exercise04.primary-handle copies, copy-assigns, self-assigns, moves and
// move-assigns handles while an allocation made in the primary context tells whether the context
// is still alive (it dies with the last release), and while a context of the check's own is
// current. It verifies that the context outlives the original of a copy, a self-assigned handle
// and a destroyed moved-from handle; that get() is the primary context, and nullptr after a move
// and in a copy of an empty handle; that the caller's context stack is as it was; that a device
// that does not exist throws wb::DriverError and leaves nothing held; and that once every handle
// has gone the primary context is inactive: no retain was leaked. With a second GPU it also moves
// handles of device 1 and verifies device() and that both devices' primary contexts end inactive
// (with one GPU it reports that part skipped).
//
// Learn it in: lesson 04, step 5 ("The last release")
PrimaryContext::PrimaryContext(CUdevice dev) {
  wb::notDone();
}

PrimaryContext::~PrimaryContext() {}

PrimaryContext::PrimaryContext(const PrimaryContext& other) {
  wb::notDone();
}

PrimaryContext& PrimaryContext::operator=(const PrimaryContext& other) {
  wb::notDone();
}

PrimaryContext::PrimaryContext(PrimaryContext&& other) noexcept {
  wb::notDone();
}

PrimaryContext& PrimaryContext::operator=(PrimaryContext&& other) noexcept {
  wb::notDone();
}

CUcontext PrimaryContext::get() const {
  wb::notDone();
}

CUdevice PrimaryContext::device() const {
  wb::notDone();
}

// Exercise 2 of 2 (any-thread): An allocation in the primary context from any thread, whatever is current there
//
// Task: Your library shares the device with the CUDA runtime, so its memory must live in the
// device's primary context, the one the runtime uses. Its entry points are called from the
// application's threads: a fresh worker thread has no current context at all, and another thread
// may have a context of its own current (one it made with cuCtxCreate, perhaps on another device).
// Write allocateInPrimary: allocate bytes of device memory in dev's primary context and return the
// pointer, whatever the calling thread has current, and leave that thread's context stack exactly
// as it was. The caller holds a retain of the primary context for as long as it uses the memory (as
// a program that uses the runtime does), so keep no retain of your own once you return: one
// retained and never released keeps the context, and all its memory, alive for ever. When the
// allocation is refused (a size the device cannot give) or the primary context cannot be made
// current, throw that refusal (wb::DriverError), with the stack as it was and no retain kept.
//
// The check: exercise04.any-thread calls allocateInPrimary from four new threads at once and from
// a thread where a context of the check's own is current. It verifies that every allocation
// belongs to the primary context (cuPointerGetAttribute), that the new threads end with no current
// context and the other thread's stack is exactly as before, and that once the check releases its
// own retain the primary context is inactive: no retain was leaked. Then it asks for 1 PiB, and
// refuses the call that makes the primary context current (cuCtxPushCurrent, or cuCtxSetCurrent
// where your code uses that; the refusal never reaches the driver): each must throw
// wb::DriverError, and leave the stack and the ledger of what the process holds as they were. With
// a second GPU it allocates in device 1's primary context while device 0's context is current
// (with one GPU it reports that part skipped).
//
// Learn it in: lesson 04, step 2 ("Retain does not make it current")
CUdeviceptr allocateInPrimary(CUdevice dev, size_t bytes) {
  wb::notDone();
}

}  // namespace ex04
