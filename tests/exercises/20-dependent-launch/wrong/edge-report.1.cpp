// Wrong (R2): asks for the edges without edge data, as code written before CUDA 12.3 does
//
// A caller unaware of edge data passes NULL for it and fills in default data. On a graph with a
// programmatic edge the driver refuses the query with CUDA_ERROR_LOSSY_QUERY rather than drop what the
// edge means: edgesOf throws on the captured dependent launch, and the first case fails.
#include "exercises.hpp"

namespace ex20 {

std::vector<Edge> edgesOf(CUgraph graph) {
  std::vector<Edge> edges;
#if CUDA_VERSION >= 12030
  size_t n = 0;
  CU_CHECK(cuGraphGetEdges_v2(graph, nullptr, nullptr, nullptr, &n));
  if (n == 0) return edges;
  std::vector<CUgraphNode> from(n), to(n);
  std::vector<CUgraphEdgeData> data(n);
  CU_CHECK(cuGraphGetEdges_v2(graph, from.data(), to.data(), nullptr, &n));
  for (size_t i = 0; i < n; ++i) edges.push_back({from[i], to[i], data[i].from_port, data[i].to_port, data[i].type});
#else
  (void)graph;
  wb::throwDriverError(CUDA_ERROR_NOT_SUPPORTED, "edge data needs CUDA 12.3", __FILE__, __LINE__);
#endif
  return edges;
}

}  // namespace ex20
