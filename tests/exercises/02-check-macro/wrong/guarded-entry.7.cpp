// Wrong (R5): writes the message with snprintf(message, capacity - 1, ...), "one less, for the NUL"
//
// snprintf already keeps room for the NUL within the size it is given: taking one off again cuts
// one character more than needed, and a buffer of one byte gets no NUL at all. The long-message
// case fails `std::string(buffer) == whole.substr(0, capacity - 1)` and `one[0] == '\0'`.
#include "exercises.hpp"

#include <cstdio>
#include <new>
#include <stdexcept>

namespace ex02 {

namespace {

// snprintf cuts to capacity - 1 characters and terminates; with capacity 0 it writes nothing, and
// the buffer may then be NULL.
void put(char* message, size_t capacity, const char* text) {
  if (capacity > 0) std::snprintf(message, capacity - 1, "%s", text);
}

}  // namespace

// The most specific handler first: wb::DriverError is a std::runtime_error, so a std::exception
// handler ahead of it would turn every driver error into CUDA_ERROR_UNKNOWN, and std::bad_alloc is a
// std::exception too. catch (...) keeps anything else from crossing the C boundary, where unwinding
// is undefined.
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
  } catch (...) {
    put(message, capacity, "an exception that is not a std::exception");
    return CUDA_ERROR_UNKNOWN;
  }
}

}  // namespace ex02
