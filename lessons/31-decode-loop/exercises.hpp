// The exercises of lesson 31 (a decode loop that never recaptures): their tasks are in exercises.cpp
// beside this file, their checks in tests/exercises/exercise31_decode_loop.cpp.
#pragma once

#include "workbook.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace ex31 {

// One decode step's chain, as kernels/decode_step.cu defines it. Every kernel is one block of
// kBlock threads. a and b are n floats each (the ops ping-pong between them); cache holds rows of n
// floats, one per position; a block of the cache is rowsPerBlock rows.
constexpr unsigned kBlock = 256;
struct Chain {
  CUfunction op = nullptr, store = nullptr, open = nullptr;  // decode_op, decode_store, decode_open
  CUdeviceptr a = 0, b = 0, cache = 0;
  unsigned n = 0, ops = 0, rowsPerBlock = 0;
};

// How many kernels the step at pos launches: the ops and the store, and the open at a block's start.
inline unsigned kernelsAt(const Chain& c, unsigned pos) { return c.ops + 1 + (pos % c.rowsPerBlock == 0 ? 1 : 0); }

// A chain graph's nodes from its one root along its edges: for a captured chain, the order in
// which they run. Given, not an exercise.
inline std::vector<CUgraphNode> chainNodes(CUgraph graph) {
  size_t roots = 0;
  CU_CHECK(cuGraphGetRootNodes(graph, nullptr, &roots));
  std::vector<CUgraphNode> order(roots);
  if (roots) CU_CHECK(cuGraphGetRootNodes(graph, order.data(), &roots));
  if (roots != 1) throw std::invalid_argument("chainNodes: the graph is not a chain (it has " + std::to_string(roots) + " roots)");
  for (;;) {
    size_t next = 0;
#if CUDA_VERSION >= 12030
    CU_CHECK(cuGraphNodeGetDependentNodes_v2(order.back(), nullptr, nullptr, &next));
#else
    CU_CHECK(cuGraphNodeGetDependentNodes(order.back(), nullptr, &next));
#endif
    if (next == 0) return order;
    if (next != 1) throw std::invalid_argument("chainNodes: a node of the graph has more than one dependent");
    CUgraphNode node = nullptr;
#if CUDA_VERSION >= 12030
    CU_CHECK(cuGraphNodeGetDependentNodes_v2(order.back(), &node, nullptr, &next));
#else
    CU_CHECK(cuGraphNodeGetDependentNodes(order.back(), &node, &next));
#endif
    order.push_back(node);
  }
}

// Exercise 1: the step at pos, launched kernel by kernel in stream s.
void launchStep(const Chain& c, unsigned pos, CUstream s);

// Exercise 2: the executable graph exec computes the step at pos from its next launch on. nodes: the
// kernel nodes of the graph exec was instantiated from, in the chain's order.
void setStep(CUgraphExec exec, const std::vector<CUgraphNode>& nodes, const Chain& c, unsigned pos);

// Exercise 3: an executable graph for the step at pos, by the cheapest way that works.
enum class Took { Instantiated, Set, Updated, Reinstantiated };
struct StepGraph {
  CUgraph graph = nullptr;         // the graph exec was instantiated from: its nodes name exec's nodes
  CUgraphExec exec = nullptr;
  std::vector<CUgraphNode> nodes;  // graph's kernel nodes, in the chain's order
};
Took prepareStep(StepGraph& g, const Chain& c, unsigned pos, CUstream s, bool setNodes,
                 CUgraphExecUpdateResult* refused = nullptr);
void releaseStepGraph(StepGraph& g);

// Exercise 4: the device-driven step: its kernels read the position from device memory (pos, one
// unsigned), and the last advances it, so one executable graph computes every step.
struct DeviceChain {
  CUfunction first = nullptr, op = nullptr, open = nullptr, store = nullptr;  // decode_*_dev
  CUdeviceptr a = 0, b = 0, cache = 0, pos = 0;
  unsigned n = 0, ops = 0, rowsPerBlock = 0;
};
CUgraph buildDeviceStep(const DeviceChain& c, CUcontext ctx);

}  // namespace ex31
