// Lesson 02's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-02
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex02 {

// Exercise 1 of 2 (check-allowing): A checking macro that names the call and the line, and lets an expected code through
//
// Task: Some results are not errors where you make the call: cuStreamQuery says
// CUDA_ERROR_NOT_READY while work is pending, and a poll loop wants that code back, while any other
// failure must still be reported as CU_CHECK reports it. The macro EX02_CHECK_ALLOWING(expr,
// allowed) in exercises.hpp evaluates the call once and passes its result, its text, and the file
// and line where it is written to checkAllowing. Write checkAllowing.
//
//   R1: CUDA_SUCCESS comes back as CUDA_SUCCESS.
//   R2: The allowed code comes back as that code, not as success.
//   R3: Any other code throws a wb::DriverError with that code, a code that other calls allow
//       (CUDA_ERROR_NOT_READY where it is not the one allowed) included.
//   R4: That error names the call, the file and the line the macro passed, as CU_CHECK's would, so
//       the report points at the caller's line, not at yours.
//
// The check: exercise02.check-allowing verifies that a call that succeeds gives CUDA_SUCCESS and an
// allowed CUDA_ERROR_INVALID_DEVICE comes back as that code; that polling a stream held by a gate
// kernel gives CUDA_ERROR_NOT_READY, then CUDA_SUCCESS once the stream has run; that the same
// failing call with NOT_READY allowed throws a wb::DriverError itself (callers catch it by that
// type) with that code and exactly the call's text, the check file and the check's line; and that
// CUDA_ERROR_NOT_READY with CUDA_ERROR_INVALID_DEVICE allowed throws too.
//
// Learn it in: lesson 02, step 1 ("A call before cuInit")
CUresult checkAllowing(CUresult rc, CUresult allowed, const char* call, const char* file, int line) {
  wb::notDone();
}

// Exercise 2 of 2 (guarded-entry): A C entry point that returns the failing call's CUresult instead of throwing
//
// Task: A plugin exports a C function to a host program written in C (or Python, or another
// compiler's C++): no exception may cross that boundary, and the host wants a code and a message.
// Write callGuarded: run body, and return its outcome as a code and a message, so the host can tell
// out of memory from an invalid context.
//
//   R1: When body returns: CUDA_SUCCESS and an empty message, whatever the buffer held.
//   R2: When it throws wb::DriverError: that error's code, with its what() as the message.
//   R3: std::bad_alloc is CUDA_ERROR_OUT_OF_MEMORY.
//   R4: Any other exception is CUDA_ERROR_UNKNOWN, with its what() as the message when it is a
//       std::exception.
//   R5: The message goes into message as snprintf would write it: at most capacity - 1 characters
//       and a NUL, nothing past capacity, nothing at all when capacity is 0 (message may then be
//       NULL), whatever the outcome.
//   R6: It never throws.
//
// The check: exercise02.guarded-entry runs bodies that fail a real call through CU_CHECK, throw
// std::bad_alloc, std::runtime_error and an int, and succeed; it verifies each code and message
// (after a success, an empty one, whatever the buffer held), that a message longer than the buffer
// is cut to capacity - 1 characters and NUL-terminated with nothing written past the buffer, that
// a buffer of one byte gets only the NUL, and that with capacity 0 not one byte of the buffer is
// written, nor anything at all through NULL, after a failure and after a success.
//
// Learn it in: lesson 02, step 1 ("A call before cuInit")
CUresult callGuarded(const std::function<void()>& body, char* message, size_t capacity) {
  wb::notDone();
}

}  // namespace ex02
