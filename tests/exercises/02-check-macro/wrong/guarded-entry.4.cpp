// Wrong (R1): writes a message only on failure, leaving the buffer as it was when the body succeeds
//
// "No error, nothing to say": the host that prints the message after every call prints whatever the
// buffer held before, an earlier error or garbage. `message[0] == '\0'` after a successful body
// fails.
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
  } catch (...) {
    put(message, capacity, "an exception that is not a std::exception");
    return CUDA_ERROR_UNKNOWN;
  }
}

}  // namespace ex02
