// Wrong (R2): the guard keeps the graph end() returned and destroys it with itself
//
// "The guard owns what it captured, on every path": the destructor destroys the graph it got,
// from end() too. The caller gets a graph that is destroyed when the guard goes out of scope, and
// instantiates a dangling handle. In "R1 R2: end() returns the captured graph ...", no graph is
// held once the guard is gone: `took == "1 graph more"` fails.
#include "exercises.hpp"

#include <map>

namespace ex15 {

namespace {
// The graph each guard's end() returned: the guard destroys what it captured (the header gives it
// no member for it).
std::map<const CaptureGuard*, CUgraph>& returned() {
  static std::map<const CaptureGuard*, CUgraph> graphs;
  return graphs;
}
}  // namespace

// A capture is ended by cuStreamEndCapture whatever its state: active, or invalidated by an
// operation the capture forbids (then it returns an error and no graph, and still takes the stream
// out of capture mode). So the destructor ends it unconditionally instead of asking first, and
// destroys the graph an active capture gives back. end() marks the capture over before it looks at
// the result, so neither a throwing end() nor a successful one is followed by a second
// cuStreamEndCapture, which would end whatever capture the caller began on the stream since.
CaptureGuard::CaptureGuard(CUstream stream, CUstreamCaptureMode mode) : stream_(stream) {
  CU_CHECK(cuStreamBeginCapture(stream, mode));
  capturing_ = true;
}

CaptureGuard::~CaptureGuard() {
  const auto kept = returned().find(this);
  if (kept != returned().end()) {
    cuGraphDestroy(kept->second);
    returned().erase(kept);
  }
  if (!capturing_) return;
  CUgraph graph = nullptr;
  cuStreamEndCapture(stream_, &graph);  // errors ignored: a destructor must not throw
  if (graph) cuGraphDestroy(graph);
}

CUgraph CaptureGuard::end() {
  capturing_ = false;
  CUgraph graph = nullptr;
  const CUresult rc = cuStreamEndCapture(stream_, &graph);
  if (rc != CUDA_SUCCESS && graph) cuGraphDestroy(graph);
  CU_CHECK(rc);
  returned()[this] = graph;
  return graph;
}

}  // namespace ex15
