// The exercises of lesson 15 (CUDA graphs): their tasks are in exercises.cpp beside this file, their
// checks in tests/exercises/exercise15_graphs.cpp.
#pragma once

#include "workbook.hpp"

namespace ex15 {

// The launch shape of axpb in TokenStep: the check's reference uses the same one.
constexpr unsigned kBlocks = 4, kThreads = 256;

// Exercise 1: one decode step captured once; each run() replays it with the token's argument, through one CUgraphExec.
class TokenStep {
 public:
  // Captures in stream the step over the n floats at data (x = 2 * x, then x = x + token) and
  // instantiates it. axpb is kernels/graphs.cu's axpb(float* data, unsigned n, float a, float b).
  // When a call fails, throws with the stream out of capture mode and nothing held.
  TokenStep(CUfunction axpb, CUdeviceptr data, unsigned n, CUstream stream);
  // Destroys the executable graph and the graph.
  ~TokenStep();
  TokenStep(const TokenStep&) = delete;
  TokenStep& operator=(const TokenStep&) = delete;
  // Enqueues the step with this token in the stream; returns before it has run.
  void run(float token);
  // The executable graph: the same one from construction to destruction.
  CUgraphExec exec() const;

 private:
  // State you will need (change it as you like).
  struct State {
    CUdeviceptr data = 0;
    unsigned n = 0;
    CUstream stream = nullptr;
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    CUgraphNode addToken = nullptr;  // the node of the second kernel, whose b is the token
  } s_;
};

// Exercise 2: keeps one executable graph in step with the graphs it is given, re-instantiating only when an update is refused.
class ExecCache {
 public:
  ExecCache() = default;
  // Destroys the executable graph, if there is one.
  ~ExecCache();
  ExecCache(const ExecCache&) = delete;
  ExecCache& operator=(const ExecCache&) = delete;
  // Makes the executable graph run what graph describes, and returns it: the first graph is
  // instantiated; a later one updates the executable graph in place, or, when the update is
  // refused, replaces it by a new instantiation. Any other error throws wb::DriverError and keeps
  // the executable graph as it was. The caller keeps ownership of graph.
  CUgraphExec apply(CUgraph graph);
  // How many times apply() has instantiated a graph.
  unsigned instantiations() const;

 private:
  CUgraphExec exec_ = nullptr;
  unsigned instantiations_ = 0;
};

// Exercise 3: a stream capture that is always ended, even when the code it wraps throws.
class CaptureGuard {
 public:
  // Begins a capture of stream in mode.
  CaptureGuard(CUstream stream, CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL);
  // If end() has not been called: ends the capture, whatever state it is in, and destroys the graph
  // it returns, if any. Never throws; afterwards the stream is out of capture mode.
  ~CaptureGuard();
  CaptureGuard(const CaptureGuard&) = delete;
  CaptureGuard& operator=(const CaptureGuard&) = delete;
  // Ends the capture and returns its graph, which the caller owns. Throws wb::DriverError when the
  // capture failed; the stream is out of capture mode either way, and the destructor does nothing more.
  CUgraph end();

 private:
  CUstream stream_ = nullptr;
  bool capturing_ = false;
};

}  // namespace ex15
