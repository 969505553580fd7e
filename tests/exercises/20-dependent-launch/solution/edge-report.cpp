// Reference solution of lesson 20's exercise edge-report (lessons/20-dependent-launch/exercises.cpp).
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
  if (n == 0) return edges;
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
