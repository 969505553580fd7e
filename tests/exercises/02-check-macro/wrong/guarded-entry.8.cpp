// Wrong (R5): after a success, empties the message with message[0] = '\0' whatever the capacity
//
// "An empty message needs no snprintf": the failures go through the careful path, and the success
// writes its NUL wherever message points. With capacity 0 the caller gave no room (the buffer may
// belong to something else): the check's `message[0] == 'X'` after a success with capacity 0
// fails (and through NULL the process crashes).
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

// The most specific handler first: wb::DriverError is a std::runtime_error, so a std::exception
// handler ahead of it would turn every driver error into CUDA_ERROR_UNKNOWN, and std::bad_alloc is a
// std::exception too. catch (...) keeps anything else from crossing the C boundary, where unwinding
// is undefined.
CUresult callGuarded(const std::function<void()>& body, char* message, size_t capacity) {
  try {
    body();
    message[0] = '\0';
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
