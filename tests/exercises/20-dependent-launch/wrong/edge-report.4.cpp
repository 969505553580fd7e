// Wrong (R4): checks the count but not the call that fills in the edges
//
// The second call "cannot fail once the first succeeded". When it does, edgesOf returns empty nodes
// and zeroed data as if they were edges: the injected failure of the second call gives no throw
// ("did not throw wb::DriverError").
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
  cuGraphGetEdges_v2(graph, from.data(), to.data(), data.data(), &n);
  for (size_t i = 0; i < n; ++i) edges.push_back({from[i], to[i], data[i].from_port, data[i].to_port, data[i].type});
#else
  (void)graph;
  wb::throwDriverError(CUDA_ERROR_NOT_SUPPORTED, "edge data needs CUDA 12.3", __FILE__, __LINE__);
#endif
  return edges;
}

}  // namespace ex20
