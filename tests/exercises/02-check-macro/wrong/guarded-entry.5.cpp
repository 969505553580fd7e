// Wrong (R4 R6): has no catch (...), "everything we throw is a std::exception"
//
// A body that throws anything else (an int, a library's own type) unwinds across the C boundary.
// The check's body that throws 42 is not caught: the exception leaves callGuarded and the case fails
// with it.
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
  } catch (const std::bad_alloc& e) {
    put(message, capacity, e.what());
    return CUDA_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    put(message, capacity, e.what());
    return CUDA_ERROR_UNKNOWN;
  }
}

}  // namespace ex02
