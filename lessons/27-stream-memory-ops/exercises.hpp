// The exercises of lesson 27 (stream memory operations): their tasks are in exercises.cpp beside this
// file, their checks in tests/exercises/exercise27_stream_memory_ops.cpp.
#pragma once

#include "workbook.hpp"

namespace ex27 {

// Exercise 1: work queued in stream after this call runs only once the 32-bit word at flag has
// reached ticket, compared cyclically.
void holdUntil(CUstream stream, CUdeviceptr flag, cuuint32_t ticket);

// Exercise 2: in one call, stream waits until the 32-bit word at ready has reached readySeq
// (cyclically), then writes the 64-bit value doneSeq to done.
void handoff(CUstream stream, CUdeviceptr ready, cuuint32_t readySeq, CUdeviceptr done, cuuint64_t doneSeq);

// Exercise 3: adds to graph, after the nodes deps[0..count), a node of context ctx that waits until
// the 32-bit word at flag has reached value (cyclically). Returns the node.
CUgraphNode addWaitNode(CUgraph graph, CUcontext ctx, const CUgraphNode* deps, size_t count, CUdeviceptr flag,
                        cuuint32_t value);

}  // namespace ex27
