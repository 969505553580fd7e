// Wrong (R3): throws when the graph has no edges, taking it for a graph the caller got wrong
//
// "A graph with no edges is an empty capture or one not yet built: say so." A graph of independent
// nodes, or of one node, or of none, is a graph like any other, and its list of edges is empty; a
// tool that saves graphs fails on the simplest ones. In "R2 R3: forty edges ...", the graph of three
// unconnected nodes makes edgesOf throw, and the case fails with wb::DriverError.
#include "exercises.hpp"

namespace ex20 {

// Asked without edge data, a graph with a programmatic edge answers CUDA_ERROR_LOSSY_QUERY: the
// edge-data query, twice: the count (from, to and edgeData all NULL), then the edges. With no edge
// there is nothing to fill, and the second call is not needed.
std::vector<Edge> edgesOf(CUgraph graph) {
  std::vector<Edge> edges;
#if CUDA_VERSION >= 12030
  size_t n = 0;
  CU_CHECK(cuGraphGetEdges_v2(graph, nullptr, nullptr, nullptr, &n));
  if (n == 0) wb::throwDriverError(CUDA_ERROR_INVALID_VALUE, "edgesOf: the graph has no edges", __FILE__, __LINE__);
  std::vector<CUgraphNode> from(n), to(n);
  std::vector<CUgraphEdgeData> data(n);
  CU_CHECK(cuGraphGetEdges_v2(graph, from.data(), to.data(), data.data(), &n));
  for (size_t i = 0; i < n; ++i) edges.push_back({from[i], to[i], data[i].from_port, data[i].to_port, data[i].type});
#else
  (void)graph;
  wb::throwDriverError(CUDA_ERROR_NOT_SUPPORTED, "edge data needs CUDA 12.3", __FILE__, __LINE__);
#endif
  return edges;
}

}  // namespace ex20
