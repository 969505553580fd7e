// The exercises of lesson 11 (runtime interop): their tasks are in exercises.cpp beside this file,
// their checks in tests/exercises/exercise11_runtime_interop.cpp.
#pragma once

#include "runtime_kernel.hpp"  // the framework's kernel add_one, compiled into the program by nvcc
#include "workbook.hpp"

#include <cuda_runtime.h>

namespace ex11 {

// A cudaStream_t is a CUstream, a cudaKernel_t a CUkernel, a cudaFunction_t a CUfunction: the
// runtime's handle types are the driver's (driver_types.h declares them on the same structs).

// Exercise 1: enqueues scale(data, factor, offset, n) in the framework's stream, from whatever thread calls it; only enqueues, and leaves that thread's current context as it was.
void scaleInStream(CUkernel scale, float* data, unsigned n, float factor, float offset, cudaStream_t stream);

// Exercise 2: enqueues the framework's add_one over the n floats at data in stream with cuLaunchKernel, in the context the stream belongs to.
void addOneThroughDriver(float* data, unsigned n, cudaStream_t stream);

}  // namespace ex11
