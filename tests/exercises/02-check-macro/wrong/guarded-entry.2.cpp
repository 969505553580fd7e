// Wrong (R3): has no handler for std::bad_alloc, so out of memory comes back as CUDA_ERROR_UNKNOWN
//
// "bad_alloc is a std::exception, the handler below takes it": it does, with the wrong code, and the
// host cannot tell a full host heap from a bug. `outOfMemory == CUDA_ERROR_OUT_OF_MEMORY` fails.
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
  } catch (const wb::DriverError& e) {
    put(message, capacity, e.what());
    return e.code();
  } catch (const std::exception& e) {
    put(message, capacity, e.what());
    return CUDA_ERROR_UNKNOWN;
  } catch (...) {
    put(message, capacity, "an exception that is not a std::exception");
    return CUDA_ERROR_UNKNOWN;
  }
}

}  // namespace ex02
