// Bridges for Driver API differences between CUDA 12.x and 13.x, so one source builds with both.
#pragma once

#include <cuda.h>

#include <cstddef>

namespace wb {

// cuCtxCreate changed shape in CUDA 13.0. Up to 12.x the default cuCtxCreate is
//   cuCtxCreate(CUcontext*, unsigned flags, CUdevice)            (cuCtxCreate_v2)
// From 13.0 the name maps to cuCtxCreate_v4, which takes creation parameters first:
//   cuCtxCreate(CUcontext*, CUctxCreateParams*, unsigned flags, CUdevice)
// and the three-argument call no longer compiles. A null CUctxCreateParams* asks for neither
// execution affinity nor CIG mode, which is what the three-argument form always meant.
//! [create-context]
inline CUresult createContext(CUcontext* ctx, unsigned int flags, CUdevice dev) {
#if CUDA_VERSION >= 13000
  return cuCtxCreate(ctx, nullptr, flags, dev);
#else
  return cuCtxCreate(ctx, flags, dev);
#endif
}
//! [create-context]

// Graph calls with an edge-data argument (CUgraphEdgeData). CUDA 12.3 added the versions that take
// it (cuStreamGetCaptureInfo_v3, cuGraphAddNode_v2); CUDA 13.0 made them what the unversioned names
// mean. Up to 12.x the unversioned names keep the old argument lists:
//   cuStreamGetCaptureInfo -> cuStreamGetCaptureInfo_v2 (12.x), _v3 (13.0): edgeData_out before the count
//   cuGraphAddNode         -> cuGraphAddNode (12.x), cuGraphAddNode_v2 (13.0): dependencyData before the count
// These bridges pass NULL edge data. For cuGraphAddNode the reference says NULL means default
// (zeroed) data for every dependency, which is what the course's graphs use. For
// cuStreamGetCaptureInfo NULL is right only while the capture has made default edges alone: a
// capture can carry other edges (a launch with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
// records a programmatic edge, lesson 20), and then a query that asks for the dependencies without
// their edge data returns CUDA_ERROR_LOSSY_QUERY (13.0 reference). The course queries no such capture.
//! [graph-edge-data]
inline CUresult streamCaptureInfo(CUstream stream, CUstreamCaptureStatus* status, cuuint64_t* id = nullptr,
                                  CUgraph* graph = nullptr, const CUgraphNode** dependencies = nullptr,
                                  size_t* count = nullptr) {
#if CUDA_VERSION >= 13000
  return cuStreamGetCaptureInfo(stream, status, id, graph, dependencies, nullptr, count);
#else
  return cuStreamGetCaptureInfo(stream, status, id, graph, dependencies, count);
#endif
}

#if CUDA_VERSION >= 12040  // CUgraphNodeParams: the course uses it (for conditional nodes) from 12.4
inline CUresult graphAddNode(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies, size_t count,
                             CUgraphNodeParams* params) {
#if CUDA_VERSION >= 13000
  return cuGraphAddNode(node, graph, dependencies, nullptr, count, params);
#else
  return cuGraphAddNode(node, graph, dependencies, count, params);
#endif
}
#endif
//! [graph-edge-data]

}  // namespace wb
