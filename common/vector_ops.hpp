// The host side of kernels/vector_ops.cu, shared by the lessons that load it (06, 07) and their tests.
#pragma once

#include <cuda.h>

#include <vector>

namespace wb {

// Launches fill(out, value, n) and then scale(out, factor, offset, n) on a fresh n-element buffer
// in the current context, waits, and returns the n floats that came back: each should be
// value * factor + offset. fill and scale may be CUfunctions of the current context or CUkernels
// cast to CUfunction (the driver then uses, or loads, the current context's copy).
std::vector<float> fillAndScale(CUfunction fill, CUfunction scale, unsigned n, float value, float factor,
                                float offset);

// How many of the values differ from expected.
size_t mismatches(const std::vector<float>& values, float expected);

// One launch of fill over 256 floats in the current context, returning what cuLaunchKernel said:
// for showing which launches the driver refuses (a function of another context, an unloaded kernel).
CUresult tryLaunchFill(CUfunction fill);

}  // namespace wb
