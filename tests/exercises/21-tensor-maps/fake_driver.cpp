// A fake libcuda for lesson 21's exercise checks: it stands for drivers this machine does not have.
// It exports cuDriverGetVersion and cuGetProcAddress_v2 only (no cuTensorMapEncodeTiled by name),
// and the environment variable WBX_FAKE_CUDA, read at every call, says which driver it is:
//   "driver <version>"          a driver of that CUDA version (12040: 12.4); from 12000 on its
//                               cuGetProcAddress_v2 gives a fake cuTensorMapEncodeTiled
//   "driver <version> without"  the same, without cuTensorMapEncodeTiled (CUDA_SUCCESS, no pointer)
//   "driver <version> failing"  the same, but cuDriverGetVersion answers CUDA_ERROR_UNKNOWN
//   "stub"                      the toolkit's stub: every call answers CUDA_ERROR_STUB_LIBRARY
// Its cuGetProcAddress_v2 answers as the reference documents: CUDA_ERROR_INVALID_VALUE for a
// version newer than the driver, CUDA_SUCCESS with no pointer and a status otherwise. The fake
// encoder writes kFakeMark into the map's first word. wbxFakeLastAsked() returns the version it was
// last asked for cuTensorMapEncodeTiled at (0: never).
#include <cuda.h>

#include <cstdlib>
#include <cstring>

namespace {

struct Mode {
  bool stub = false, without = false, failing = false;
  int version = 12040;
};

Mode mode() {
  Mode m;
  const char* text = std::getenv("WBX_FAKE_CUDA");
  if (!text) return m;
  if (std::strcmp(text, "stub") == 0) return m.stub = true, m;
  if (std::strncmp(text, "driver ", 7) == 0) {
    m.version = std::atoi(text + 7);
    m.without = std::strstr(text, "without") != nullptr;
    m.failing = std::strstr(text, "failing") != nullptr;
  }
  return m;
}

int lastAsked = 0;
constexpr cuuint64_t kFakeMark = 0xFA4EC0DEull;

CUresult CUDAAPI fakeEncode(CUtensorMap* map, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                            const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                            CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  std::memset(map, 0, sizeof *map);
  map->opaque[0] = kFakeMark;
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) CUresult CUDAAPI cuDriverGetVersion(int* driverVersion) {
  const Mode m = mode();
  if (m.stub) return CUDA_ERROR_STUB_LIBRARY;
  if (m.failing) return CUDA_ERROR_UNKNOWN;  // and no version written
  if (!driverVersion) return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = m.version;
  return CUDA_SUCCESS;
}

__attribute__((visibility("default"))) CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn,
                                                                            int cudaVersion, cuuint64_t,
                                                                            CUdriverProcAddressQueryResult* status) {
  const Mode m = mode();
  if (m.stub) return CUDA_ERROR_STUB_LIBRARY;
  if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
  *pfn = nullptr;
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (std::strcmp(symbol, "cuTensorMapEncodeTiled") == 0) lastAsked = cudaVersion;
  if (cudaVersion > m.version) {
    if (status) *status = found;
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (std::strcmp(symbol, "cuTensorMapEncodeTiled") == 0 && m.version >= 12000 && !m.without) {
    if (cudaVersion < 12000) {
      found = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    } else {
      *pfn = reinterpret_cast<void*>(&fakeEncode);
      found = CU_GET_PROC_ADDRESS_SUCCESS;
    }
  }
  if (status) *status = found;
  return CUDA_SUCCESS;
}

__attribute__((visibility("default"))) int wbxFakeLastAsked() { return lastAsked; }

}  // extern "C"
