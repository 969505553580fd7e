// Bridges for Driver API differences between CUDA 12.x and 13.x, so one source builds with both.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

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

// Batched copies came with CUDA 12.8 (cuMemcpyBatchAsync, cuMemcpy3DBatchAsync, CUmemcpyAttributes)
// and changed shape in 13.0. In 12.8 and 12.9 both calls take a size_t* failIdx, where the driver
// writes the index of the copy it failed on (SIZE_MAX, the 12.x reference says, for an error that
// concerns no single copy):
//   cuMemcpyBatchAsync(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream)
//   cuMemcpy3DBatchAsync(numOps, opList, failIdx, flags, hStream)
// From 13.0 the names map to cuMemcpyBatchAsync_v2 and cuMemcpy3DBatchAsync_v2, without failIdx:
//   cuMemcpyBatchAsync(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, hStream)
//   cuMemcpy3DBatchAsync(numOps, opList, flags, hStream)
// These bridges take the 13.0 arguments and, last, an optional failIdx: under 12.8 and 12.9 it gets
// what the driver wrote; under 13.0, which names no copy, SIZE_MAX. Toolkits before 12.8 have
// neither call nor their types, so code that batches is guarded by #if CUDA_VERSION >= 12080 (lesson
// 22 says what a build without them shows).
//! [memcpy-batch]
#if CUDA_VERSION >= 12080
inline CUresult memcpyBatchAsync(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count,
                                 CUmemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs,
                                 CUstream stream, size_t* failIdx = nullptr) {
#if CUDA_VERSION >= 13000
  if (failIdx) *failIdx = SIZE_MAX;
  return cuMemcpyBatchAsync(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream);
#else
  size_t where = SIZE_MAX;
  const CUresult rc =
      cuMemcpyBatchAsync(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, &where, stream);
  if (failIdx) *failIdx = where;
  return rc;
#endif
}

inline CUresult memcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* ops, unsigned long long flags,
                                   CUstream stream, size_t* failIdx = nullptr) {
#if CUDA_VERSION >= 13000
  if (failIdx) *failIdx = SIZE_MAX;
  return cuMemcpy3DBatchAsync(numOps, ops, flags, stream);
#else
  size_t where = SIZE_MAX;
  const CUresult rc = cuMemcpy3DBatchAsync(numOps, ops, &where, flags, stream);
  if (failIdx) *failIdx = where;
  return rc;
#endif
}
#endif
//! [memcpy-batch]

// Managed memory's advice and prefetch (lesson 23) changed shape in CUDA 13.0. Up to 12.x the
// unversioned names take a device ordinal, CU_DEVICE_CPU meaning the host:
//   cuMemAdvise(ptr, bytes, advice, CUdevice device)
//   cuMemPrefetchAsync(ptr, bytes, CUdevice dstDevice, hStream)
// CUDA 12.2 added forms that take a CUmemLocation (a device, the host, a host NUMA node) and, for the
// prefetch, flags that must be 0: cuMemAdvise_v2 and cuMemPrefetchAsync_v2, which the 12.x reference
// says "will supplant this version in 13.0". From 13.0 the unversioned names are those forms:
//   cuMemAdvise(ptr, bytes, advice, CUmemLocation location)
//   cuMemPrefetchAsync(ptr, bytes, CUmemLocation location, unsigned flags, hStream)
// and a call with a device ordinal no longer compiles. These bridges take the 13.0 arguments. Built
// with 12.x, a device or the host goes to the ordinal form, which every 12.x driver has; a location
// only a CUmemLocation can name (a host NUMA node) goes to the _v2 form from 12.2 on and is refused
// with CUDA_ERROR_NOT_SUPPORTED before it. Advice that ignores its location (SET_READ_MOSTLY,
// UNSET_READ_MOSTLY, UNSET_PREFERRED_LOCATION) may be given a zeroed CUmemLocation.
// The batch calls cuMemPrefetchBatchAsync, cuMemDiscardBatchAsync and cuMemDiscardAndPrefetchBatchAsync
// came with 13.0 (cudaTypedefs.h names their types _v13000) and have no 12.x form: code that uses
// them is guarded by #if CUDA_VERSION >= 13000.
//
// CUDA 12.0 and 12.1 have CUmemLocation with device locations only; 12.2 added the host (type 2) and
// host NUMA nodes. deviceLocation and hostLocation build one with every toolkit.
inline CUmemLocation deviceLocation(CUdevice dev) {
  CUmemLocation where{};
  where.type = CU_MEM_LOCATION_TYPE_DEVICE;
  where.id = dev;
  return where;
}
inline CUmemLocation hostLocation() {
  CUmemLocation where{};
  where.type = static_cast<CUmemLocationType>(2);  // CU_MEM_LOCATION_TYPE_HOST from 12.2 on; id ignored
  return where;
}

//! [managed-location]
#if CUDA_VERSION < 13000
namespace detail {
// The 12.x device ordinal for a location, where it has one.
inline bool ordinalOf(const CUmemLocation& where, CUdevice* ordinal) {
  switch (static_cast<int>(where.type)) {
    case CU_MEM_LOCATION_TYPE_DEVICE: *ordinal = where.id; return true;
    case 2: *ordinal = CU_DEVICE_CPU; return true;                                 // the host
    case CU_MEM_LOCATION_TYPE_INVALID: *ordinal = CU_DEVICE_INVALID; return true;  // ignored by that advice
    default: return false;  // a host NUMA node: no ordinal names it
  }
}
}  // namespace detail
#endif

inline CUresult memAdvise(CUdeviceptr ptr, size_t bytes, CUmem_advise advice, CUmemLocation location) {
#if CUDA_VERSION >= 13000
  return cuMemAdvise(ptr, bytes, advice, location);
#else
  CUdevice ordinal = 0;
  if (detail::ordinalOf(location, &ordinal)) return cuMemAdvise(ptr, bytes, advice, ordinal);
#if CUDA_VERSION >= 12020
  return cuMemAdvise_v2(ptr, bytes, advice, location);
#else
  return CUDA_ERROR_NOT_SUPPORTED;
#endif
#endif
}
//! [managed-location]

//! [managed-prefetch]
inline CUresult memPrefetchAsync(CUdeviceptr ptr, size_t bytes, CUmemLocation location, unsigned int flags,
                                 CUstream stream) {
#if CUDA_VERSION >= 13000
  return cuMemPrefetchAsync(ptr, bytes, location, flags, stream);
#else
  CUdevice ordinal = 0;
  if (detail::ordinalOf(location, &ordinal))  // the ordinal form has no flags: only 0 is valid
    return flags != 0 ? CUDA_ERROR_INVALID_VALUE : cuMemPrefetchAsync(ptr, bytes, ordinal, stream);
#if CUDA_VERSION >= 12020
  return cuMemPrefetchAsync_v2(ptr, bytes, location, flags, stream);
#else
  return CUDA_ERROR_NOT_SUPPORTED;
#endif
#endif
}
//! [managed-prefetch]

}  // namespace wb
