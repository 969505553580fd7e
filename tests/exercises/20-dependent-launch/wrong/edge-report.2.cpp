// Wrong (R2): one call with room for 32 edges, as "no graph has more"
//
// A fixed buffer: the driver fills in as many edges as there is room for. The chain of 41 nodes has 40
// edges and edgesOf returns 32 ("another number of edges than 40"); the injected failure of a second
// call never fires ("did not call cuGraphGetEdges_v2 twice").
#include "exercises.hpp"

namespace ex20 {

std::vector<Edge> edgesOf(CUgraph graph) {
  std::vector<Edge> edges;
#if CUDA_VERSION >= 12030
  size_t n = 32;
  CUgraphNode from[32] = {}, to[32] = {};
  CUgraphEdgeData data[32] = {};
  CU_CHECK(cuGraphGetEdges_v2(graph, from, to, data, &n));
  for (size_t i = 0; i < n; ++i) edges.push_back({from[i], to[i], data[i].from_port, data[i].to_port, data[i].type});
#else
  (void)graph;
  wb::throwDriverError(CUDA_ERROR_NOT_SUPPORTED, "edge data needs CUDA 12.3", __FILE__, __LINE__);
#endif
  return edges;
}

}  // namespace ex20
