// The exercises of lesson 29 (graph memory, as engines capture): their tasks are in exercises.cpp
// beside this file, their checks in tests/exercises/exercise29_graph_memory.cpp.
#pragma once

#include "workbook.hpp"

#include <functional>
#include <vector>

namespace ex29 {

// Exercise 1: scratch memory for a library kernel, whether or not its caller's stream is capturing:
// allocated and given back in stream order in `stream`.
CUdeviceptr scratchFor(CUstream stream, size_t bytes);
void releaseScratch(CUstream stream, CUdeviceptr scratch);

// Exercise 2: captures what work enqueues in stream into graph, after every node of `after`.
void appendCaptured(CUgraph graph, const std::vector<CUgraphNode>& after, CUstream stream,
                    const std::function<void(CUstream)>& work);

// Exercise 3: the kernel node `node` of an executable graph, a launch of kernels/vector_ops.cu's
// fill(float* out, float value, unsigned n), fills with `value` from the next launch on.
void setFillValue(CUgraphExec exec, CUgraphNode node, float value);

}  // namespace ex29
