// Wrong (R1): swaps the two ends of each edge
//
// "from depends on to" read the wrong way round: the reference says the node in to[i] depends on the
// node in from[i]. Every edge comes back reversed: "the captured graph's programmatic edge, its nodes
// or its data differ".
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
  CU_CHECK(cuGraphGetEdges_v2(graph, from.data(), to.data(), data.data(), &n));
  for (size_t i = 0; i < n; ++i) edges.push_back({to[i], from[i], data[i].from_port, data[i].to_port, data[i].type});
#else
  (void)graph;
  wb::throwDriverError(CUDA_ERROR_NOT_SUPPORTED, "edge data needs CUDA 12.3", __FILE__, __LINE__);
#endif
  return edges;
}

}  // namespace ex20
