// Wrong (R5): empties the message before running the body, whatever the capacity, "so it is always terminated"
//
// With capacity 0 the caller gave no room at all (the buffer may be NULL, or belong to something
// else): one byte is written where none may be. The check's `message[0] == 'X'` after a capacity
// of 0 fails.
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
  if (message) message[0] = '\0';
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
  } catch (...) {
    put(message, capacity, "an exception that is not a std::exception");
    return CUDA_ERROR_UNKNOWN;
  }
}

}  // namespace ex02
