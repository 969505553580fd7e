// Wrong (R4): catches what is neither a driver error nor bad_alloc with catch (...) alone, with a message of its own
//
// "catch (...) takes everything else": it does, with the right code, but a std::runtime_error's
// what() is the one thing the host could show, and it is replaced by a fixed text. The check's
// `std::string(message, ...) == "the model file is truncated"` fails.
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
    put(message, capacity, "");
    return CUDA_SUCCESS;
  } catch (const wb::DriverError& e) {
    put(message, capacity, e.what());
    return e.code();
  } catch (const std::bad_alloc& e) {
    put(message, capacity, e.what());
    return CUDA_ERROR_OUT_OF_MEMORY;
  } catch (...) {
    put(message, capacity, "an exception that is not a std::exception");
    return CUDA_ERROR_UNKNOWN;
  }
}

}  // namespace ex02
