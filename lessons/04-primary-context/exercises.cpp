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
// PrimaryContext (declared in exercises.hpp), one retain of dev's primary context per handle that
// holds it.
//
//   R1: The constructor retains dev's primary context, which get() returns; a device the driver
//       refuses throws that refusal, as wb::DriverError, and leaves nothing held.
//   R2: A copy, constructed or assigned, holds a retain of its own; a copy of an empty handle is
//       empty, and a handle assigned an empty one gives back what it held and is empty.
//   R3: A move, constructed or assigned, hands the retain over: the moved-from handle is empty
//       (get() returns nullptr) and releases nothing, and a handle assigned to gives back what it held.
//   R4: device() names the device, also after copies and moves.
//   R5: Assigning a handle to itself, by copy or by move, changes nothing.
//   R6: The primary context is released exactly when the last handle that holds it goes: not while
//       one still holds it, and no retain is left once every handle has gone.
//   R7: Retaining makes no context current, and nor does the handle: making, copying, moving and
//       destroying handles leaves every thread's context stack alone.
//   R8: The destructor does not throw, also when the release it makes fails.
//
// The check: exercise04.primary-handle copies, copy-assigns, self-assigns (by copy and by move),
// moves and move-assigns handles while an allocation made in the primary context tells whether the
// context is still alive (it dies with the last release), and while a context of the check's own is
// current. It verifies that the context outlives the original of a copy, a self-assigned handle and
// a destroyed moved-from handle; that get() is the primary context, and nullptr after a move, in a
// copy of an empty handle and in a handle assigned an empty one (by copy or by move); that the
// caller's context stack is as it was; that a device that does not exist throws wb::DriverError and
// leaves nothing held; and that once every handle has gone the primary context is inactive: no
// retain was leaked. In a child process it makes the destructor's release fail (without reaching
// the driver): the child must not be ended by an exception. With a second GPU it also copies and
// moves handles of device 1 and verifies device() and that both devices' primary contexts end
// inactive (with one GPU it reports that case skipped).
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
// Write allocateInPrimary. The caller holds a retain of the primary context for as long as it uses
// the memory (as a program that uses the runtime does); one retained and never released keeps the
// context, and all its memory, alive for ever.
//
//   R1: It allocates bytes of device memory in dev's primary context and returns the pointer,
//       whatever the calling thread has current: nothing, or a context of its own, of dev or of
//       another device.
//   R2: The calling thread's context stack is exactly as it was when it returns or throws.
//   R3: It keeps no retain of its own once it returns or throws.
//   R4: When the allocation is refused (a size the device cannot give) or the primary context
//       cannot be made current, it throws that refusal (wb::DriverError).
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
// (with one GPU it reports that case skipped).
//
// Learn it in: lesson 04, step 2 ("Retain does not make it current")
CUdeviceptr allocateInPrimary(CUdevice dev, size_t bytes) {
  wb::notDone();
}

}  // namespace ex04
