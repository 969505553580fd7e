// Wrong (R2 R3): one handler for every std::exception, "they all have what()"
//
// The message is right, but a wb::DriverError comes back as CUDA_ERROR_UNKNOWN and std::bad_alloc
// too: the host cannot tell out of memory from anything else. The check's `rc ==
// CUDA_ERROR_INVALID_DEVICE` and `outOfMemory == CUDA_ERROR_OUT_OF_MEMORY` fail.
#include "exercises.hpp"

#include <cstdio>
#include <new>
#include <stdexcept>

namespace ex02 {

namespace {

// snprintf cuts to capacity - 1 characters and terminates; with capacity 0 it writes nothing, and
// the buffer may then be NULL.
void put(char* message, size_t capacity, const char* text) {
  if (capacity > 0) std::snprintf(message, capacity, "%s", text);
}

}  // namespace

CUresult callGuarded(const std::function<void()>& body, char* message, size_t capacity) {
  try {
    body();
    put(message, capacity, "");
    return CUDA_SUCCESS;
  } catch (const std::exception& e) {
    put(message, capacity, e.what());
    return CUDA_ERROR_UNKNOWN;
  } catch (...) {
    put(message, capacity, "an exception that is not a std::exception");
    return CUDA_ERROR_UNKNOWN;
  }
}

}  // namespace ex02
