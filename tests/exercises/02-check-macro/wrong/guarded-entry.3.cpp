// Wrong (R5): copies the message with strncpy(message, text, capacity), which does not terminate a text that fills the buffer
//
// strncpy is "the safe strcpy" to many: it never writes past capacity, but when the text is as long
// as the buffer or longer it writes no NUL, and the C caller reads past the buffer. The check's
// message of 16 characters' room gets none: `terminated` fails.
#include "exercises.hpp"

#include <cstring>
#include <new>
#include <stdexcept>

namespace ex02 {

namespace {

// snprintf cuts to capacity - 1 characters and terminates; with capacity 0 it writes nothing, and
// the buffer may then be NULL.
void put(char* message, size_t capacity, const char* text) {
  if (capacity > 0) std::strncpy(message, text, capacity);
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
  } catch (...) {
    put(message, capacity, "an exception that is not a std::exception");
    return CUDA_ERROR_UNKNOWN;
  }
}

}  // namespace ex02
