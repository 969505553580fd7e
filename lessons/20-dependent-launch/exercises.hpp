// The exercises of lesson 20 (programmatic dependent launch): their tasks are in exercises.cpp beside
// this file, their checks in tests/exercises/exercise20_dependent_launch.cpp.
#pragma once

#include "workbook.hpp"

#include <vector>

namespace ex20 {

// Exercise 1: launches f (blocks x threads, 1-D, the arguments args) in stream as a programmatic
// dependent of the kernel before it there.
void launchDependent(CUfunction f, unsigned blocks, unsigned threads, void** args, CUstream stream);

// One edge of a graph: `to` depends on `from`, with the three fields of its CUgraphEdgeData.
struct Edge {
  CUgraphNode from = nullptr, to = nullptr;
  unsigned char fromPort = 0, toPort = 0, type = 0;
};

// Exercise 2: every edge of graph with its edge data, in the order the driver lists them.
std::vector<Edge> edgesOf(CUgraph graph);

// Exercise 3: adds a kernel node of f (one block of one thread, the arguments args) to the graph that
// stream is capturing into, after everything the stream's next work would depend on, each dependency
// with its edge data, and makes the node the stream's only dependency. Returns the node.
CUgraphNode appendToCapture(CUstream stream, CUfunction f, void** args);

}  // namespace ex20
