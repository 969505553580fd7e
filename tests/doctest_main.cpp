// The main() of every doctest binary in the course.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "cuda_check.hpp"

// A test that ends in an unexpected wb::DriverError reports the failed call, file, line and error.
REGISTER_EXCEPTION_TRANSLATOR(const wb::DriverError& e) { return doctest::String(e.what()); }
