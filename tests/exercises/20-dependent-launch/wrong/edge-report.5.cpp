// Wrong (R1): keeps the edge's type but not the port it leaves from
//
// "Programmatic or not is all that matters": the port says when the dependency is released (the
// trigger, or only the start of every block), and a graph rebuilt without it waits for something else.
// The captured edge's from_port PROGRAMMATIC comes back 0: the element-by-element comparison fails.
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
  for (size_t i = 0; i < n; ++i) edges.push_back({from[i], to[i], 0, data[i].to_port, data[i].type});
#else
  (void)graph;
  wb::throwDriverError(CUDA_ERROR_NOT_SUPPORTED, "edge data needs CUDA 12.3", __FILE__, __LINE__);
#endif
  return edges;
}

}  // namespace ex20
