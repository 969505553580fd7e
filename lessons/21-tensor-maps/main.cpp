// Lesson 21: tensor maps, the Tensor Memory Accelerator reached the deployable way.
//
// What you learn: a program that ships to machines it has never seen links no libcuda. This one dlopens the
// driver, takes each function through cuGetProcAddress at the version of the PFN_ type it casts to (the
// static runtime hands out the same), and shows from its ELF file that it starts without libcuda.so.1. Then a
// tensor map describes a tile of a row-major matrix to the Tensor Memory Accelerator (TMA, compute capability
// 9.0), each rule's refusal provoked; a kernel takes it as a `const __grid_constant__` parameter and loads
// boxes (zeros or NaN outside); a map is retargeted; and a large copy, four ways, meets the DRAM's peak.
//
// APIs: cuGetProcAddress (from a dlopened libcuda), cudaGetDriverEntryPointByVersion, cuTensorMapEncodeTiled,
//       cuTensorMapReplaceAddress, cuLaunchKernel, cuMemcpy2D, cuMemcpyDtoD, cuDeviceGetAttribute, cuEventElapsedTime
// Run:  ctest -R lesson21   (or build/lessons/lesson21-tensor-maps [--csv lesson21-figure.csv])
#include "figure.hpp"
#include "loaded_driver.hpp"
#include "machine.hpp"
#include "needs.hpp"
#include "process.hpp"
#include "workbook.hpp"  // steps, expect, reportFatal, the image reader: none of them calls the driver

#include <cuda_runtime_api.h>  // cudaGetDriverEntryPointByVersion (the runtime is linked statically)
#include <cudaTypedefs.h>      // PFN_<call>_v<version>: each driver function's type, by the version of its signature

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

// Every driver function this program calls, typed and asked for at the CUDA version of its signature.
//! [api]
struct Api {
  PFN_cuGetErrorName_v6000 cuGetErrorName;
  PFN_cuGetErrorString_v6000 cuGetErrorString;
  PFN_cuInit_v2000 cuInit;
  PFN_cuDeviceGet_v2000 cuDeviceGet;
  PFN_cuDeviceGetName_v2000 cuDeviceGetName;
  PFN_cuDeviceGetAttribute_v2000 cuDeviceGetAttribute;
  PFN_cuDevicePrimaryCtxRetain_v7000 cuDevicePrimaryCtxRetain;
  PFN_cuDevicePrimaryCtxRelease_v11000 cuDevicePrimaryCtxRelease;
  PFN_cuCtxSetCurrent_v4000 cuCtxSetCurrent;
  PFN_cuMemGetInfo_v3020 cuMemGetInfo;
  PFN_cuMemAlloc_v3020 cuMemAlloc;
  PFN_cuMemFree_v3020 cuMemFree;
  PFN_cuMemsetD32_v3020 cuMemsetD32;
  PFN_cuMemcpyHtoD_v3020 cuMemcpyHtoD;
  PFN_cuMemcpyDtoH_v3020 cuMemcpyDtoH;
  PFN_cuMemcpyDtoD_v3020 cuMemcpyDtoD;
  PFN_cuMemcpy2D_v3020 cuMemcpy2D;
  PFN_cuLibraryLoadData_v12000 cuLibraryLoadData;
  PFN_cuLibraryGetKernel_v12000 cuLibraryGetKernel;
  PFN_cuKernelGetFunction_v12000 cuKernelGetFunction;
  PFN_cuLibraryUnload_v12000 cuLibraryUnload;
  PFN_cuLaunchKernel_v4000 cuLaunchKernel;
  PFN_cuEventCreate_v2000 cuEventCreate;
  PFN_cuEventRecord_v2000 cuEventRecord;
  PFN_cuEventSynchronize_v2000 cuEventSynchronize;
  PFN_cuEventElapsedTime_v2000 cuEventElapsedTime;
  PFN_cuEventDestroy_v4000 cuEventDestroy;
  PFN_cuTensorMapEncodeTiled_v12000 cuTensorMapEncodeTiled;
  PFN_cuTensorMapReplaceAddress_v12000 cuTensorMapReplaceAddress;
};
//! [api]

Api drv;  // filled in step 1, from the driver this process opened
struct Unusable : std::runtime_error { using std::runtime_error::runtime_error; };  // no driver or device: exit 2

std::string describe(CUresult rc) {
  const char* name = nullptr;
  if (!drv.cuGetErrorName || drv.cuGetErrorName(rc, &name) != CUDA_SUCCESS || !name) name = wb::toolkitErrorName(rc);
  return std::string(name ? name : "unknown CUresult") + " (" + std::to_string(static_cast<int>(rc)) + ")";
}

// The checked call: CU_CHECK names errors through a linked libcuda, and this program links none.
void check(CUresult rc, const char* call) {
  if (rc == CUDA_SUCCESS) return;
  const char* text = nullptr;
  if (drv.cuGetErrorString) drv.cuGetErrorString(rc, &text);
  throw std::runtime_error(std::string(call) + " failed: " + describe(rc) + (text ? std::string(": ") + text : ""));
}

//! [open]
// wb::LoadedDriver dlopens libcuda.so.1 (lesson 12 step 4 shows how); cuDriverGetVersion needs no cuInit.
int openDriver(const wb::LoadedDriver& d) {
  if (!d.opened()) throw Unusable("no CUDA driver: dlopen(\"libcuda.so.1\") failed: " + d.openError());
  int version = 0;
  const CUresult rc = d.version(&version);
  if (wb::classifyInit(rc) == wb::InitAnswer::Stub)  // cuDriverGetVersion's answer read as cuInit's
    throw Unusable("the libcuda.so.1 this program opened (" + d.path() + ") is the CUDA toolkit's stub "
                   "library, not a driver.\nWhat to do: install the NVIDIA driver, and keep the toolkit's "
                   "stubs/ folder off LD_LIBRARY_PATH.");
  if (rc != CUDA_SUCCESS || !wb::meetsDriver(version, wb::For::AnyStep) || !d.hasProcAddress())
    throw Unusable(d.path() + " is not a driver of CUDA 12.0 or newer, which tensor maps need "
                   "(cuDriverGetVersion: " + d.describe(rc) + ", " + std::to_string(version) +
                   ").\nWhat to do: update the NVIDIA driver.");
  std::printf("dlopen(\"libcuda.so.1\"): %s\ncuDriverGetVersion: %d (CUDA %s)\n", d.path().c_str(), version,
              wb::cudaVersionText(version).c_str());
  return version;
}
//! [open]

// By base name and the version of its PFN_ type. A driver without it answers CUDA_SUCCESS, no pointer.
template <class F>
void take(const wb::LoadedDriver& d, F& into, const char* name, int version) {
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CUresult rc = CUDA_SUCCESS;
  into = reinterpret_cast<F>(d.lookUp(name, version, &status, &rc));
  if (!into)
    throw Unusable(std::string("this driver has no ") + name + " at CUDA version " + std::to_string(version) +
                   " (cuGetProcAddress: " + d.describe(rc) + ", status " + std::to_string(status) +
                   ").\nWhat to do: update the NVIDIA driver.");
}
void takeAll(const wb::LoadedDriver& d) {
  take(d, drv.cuGetErrorName, "cuGetErrorName", 6000);
  take(d, drv.cuGetErrorString, "cuGetErrorString", 6000);
  take(d, drv.cuInit, "cuInit", 2000);
  take(d, drv.cuDeviceGet, "cuDeviceGet", 2000);
  take(d, drv.cuDeviceGetName, "cuDeviceGetName", 2000);
  take(d, drv.cuDeviceGetAttribute, "cuDeviceGetAttribute", 2000);
  take(d, drv.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000);
  take(d, drv.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease", 11000);
  take(d, drv.cuCtxSetCurrent, "cuCtxSetCurrent", 4000);
  take(d, drv.cuMemGetInfo, "cuMemGetInfo", 3020);
  take(d, drv.cuMemAlloc, "cuMemAlloc", 3020);
  take(d, drv.cuMemFree, "cuMemFree", 3020);
  take(d, drv.cuMemsetD32, "cuMemsetD32", 3020);
  take(d, drv.cuMemcpyHtoD, "cuMemcpyHtoD", 3020);
  take(d, drv.cuMemcpyDtoH, "cuMemcpyDtoH", 3020);
  take(d, drv.cuMemcpyDtoD, "cuMemcpyDtoD", 3020);
  take(d, drv.cuMemcpy2D, "cuMemcpy2D", 3020);
  take(d, drv.cuLibraryLoadData, "cuLibraryLoadData", 12000);
  take(d, drv.cuLibraryGetKernel, "cuLibraryGetKernel", 12000);
  take(d, drv.cuKernelGetFunction, "cuKernelGetFunction", 12000);
  take(d, drv.cuLibraryUnload, "cuLibraryUnload", 12000);
  take(d, drv.cuLaunchKernel, "cuLaunchKernel", 4000);
  take(d, drv.cuEventCreate, "cuEventCreate", 2000);
  take(d, drv.cuEventRecord, "cuEventRecord", 2000);
  take(d, drv.cuEventSynchronize, "cuEventSynchronize", 2000);
  take(d, drv.cuEventElapsedTime, "cuEventElapsedTime", 2000);
  take(d, drv.cuEventDestroy, "cuEventDestroy", 4000);
  take(d, drv.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled", 12000);
  take(d, drv.cuTensorMapReplaceAddress, "cuTensorMapReplaceAddress", 12000);
}

const char* statusName(CUdriverProcAddressQueryResult s) {
  return s == CU_GET_PROC_ADDRESS_SUCCESS                  ? "CU_GET_PROC_ADDRESS_SUCCESS"
         : s == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT ? "CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT"
                                                           : "CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND";
}
//! [versions]
// At its own version, one before tensor maps, and one past this driver (a newer toolkit's CUDA_VERSION).
void askAtVersions(const wb::LoadedDriver& d, int driverVersion) {
  for (int version : {12000, 11080, driverVersion + 10}) {
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult rc = CUDA_SUCCESS;
    const void* fn = d.lookUp("cuTensorMapEncodeTiled", version, &status, &rc);
    std::printf("cuGetProcAddress(\"cuTensorMapEncodeTiled\", %d): %s, %s\n", version, d.describe(rc).c_str(),
                rc != CUDA_SUCCESS ? "no pointer" : fn ? wb::hex(fn).c_str() : statusName(status));
    const bool found = rc == CUDA_SUCCESS && fn == reinterpret_cast<void*>(drv.cuTensorMapEncodeTiled);
    const bool tooOld = rc == CUDA_SUCCESS && status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT && !fn;
    const bool tooNew = rc == CUDA_ERROR_INVALID_VALUE && !fn;
    const bool documented = version == 12000 ? found : version == 11080 ? tooOld : tooNew;
    wb::expect(documented, "the answers the reference documents for each version",
               "another answer at " + std::to_string(version));
  }
}
//! [versions]

//! [needed]
// The program's own ELF file (lesson 00's reader): what the loader must find and bind before main.
void whatStartNeeds() {
  const wb::DynamicSection self = wb::readDynamicSection(wb::selfPath());
  wb::expect(self.read, "the program's dynamic section", "it could not be read");
  std::string needed, driverImports;
  for (const std::string& n : self.needed) needed += " " + n;
  for (const std::string& s : self.imported)
    if (s.size() > 2 && s.compare(0, 2, "cu") == 0 && std::isupper(static_cast<unsigned char>(s[2])))
      driverImports += " " + s;
  const bool libcuda = needed.find("libcuda") != std::string::npos,
             cudart = needed.find("libcudart") != std::string::npos;
  std::printf("DT_NEEDED:%s\nlibcuda.so.1 among them: %s; libcudart among them: %s (the runtime is linked "
              "statically)\n", needed.c_str(), libcuda ? "YES" : "no", cudart ? "YES" : "no");
  std::printf("driver functions the loader must bind (undefined cu* symbols): %s\n",
              driverImports.empty() ? "none" : driverImports.c_str());
  wb::expect(!libcuda && !cudart && driverImports.empty(), "a program that needs no CUDA library to start",
             "it names libcuda or libcudart, or imports a driver function");
}
//! [needed]

//! [runtime]
// The runtime's way (CUDA 12.5 and newer), by name and version: it opens libcuda.so.1 at its first call.
void fromRuntime() {
#if CUDART_VERSION >= 12050
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t rc =
      cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &status);
  const bool same = fn == reinterpret_cast<void*>(drv.cuTensorMapEncodeTiled);
  std::printf("the runtime (CUDA %s, linked statically)\n"
              "cudaGetDriverEntryPointByVersion(\"cuTensorMapEncodeTiled\", 12000): %s, %s, %s\n",
              wb::cudaVersionText(runtime).c_str(), cudaGetErrorName(rc),
              status == cudaDriverEntryPointSuccess ? "cudaDriverEntryPointSuccess" : "not found",
              fn ? wb::hex(fn).c_str() : "no pointer");
  std::printf("cuGetProcAddress's pointer, step 1: %s\n", same ? "the same address" : "ANOTHER address");
  wb::expect(rc == cudaSuccess && status == cudaDriverEntryPointSuccess && same,
             "the runtime handing out the driver's own function", "another answer");
#else
  std::printf("cudaGetDriverEntryPointByVersion needs CUDA 12.5; this runtime is %d.%d: "
              "use cuGetProcAddress\n", CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
#endif
}
//! [runtime]

int attribute(CUdevice dev, CUdevice_attribute what) {
  int value = 0;
  check(drv.cuDeviceGetAttribute(&value, what, dev), "cuDeviceGetAttribute");
  return value;
}
CUdeviceptr alloc(size_t bytes) {
  CUdeviceptr p = 0;
  check(drv.cuMemAlloc(&p, bytes), "cuMemAlloc");
  return p;
}
std::vector<float> download(CUdeviceptr p, size_t floats) {
  std::vector<float> host(floats);
  check(drv.cuMemcpyDtoH(host.data(), p, floats * 4), "cuMemcpyDtoH");
  return host;
}

struct Matrix {  // row-major, in device memory: rows of cols floats, pitch bytes apart
  CUdeviceptr base = 0;
  unsigned long long rows = 0, cols = 0, pitch = 0;
};
// Element (r, c) holds seed + 1000 r + c (exact in a float for these sizes); padding holds -1.
Matrix newMatrix(unsigned long long rows, unsigned long long cols, unsigned long long pitchFloats, float seed) {
  Matrix m{alloc(rows * pitchFloats * 4), rows, cols, pitchFloats * 4};
  std::vector<float> host(rows * pitchFloats, -1.0f);
  for (unsigned long long r = 0; r < rows; ++r)
    for (unsigned long long c = 0; c < cols; ++c) host[r * pitchFloats + c] = seed + 1000.0f * r + c;
  check(drv.cuMemcpyHtoD(m.base, host.data(), host.size() * 4), "cuMemcpyHtoD");
  return m;
}

struct Kernels {
  CUlibrary library = nullptr;
  CUfunction tmaLoadBox = nullptr, tmaCopy = nullptr, plainLoadBox = nullptr, plainCopy = nullptr;
};
Kernels loadKernels(const std::vector<char>& image) {
  CUlibrary lib = nullptr;
  check(drv.cuLibraryLoadData(&lib, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0), "cuLibraryLoadData");
  const auto function = [lib](const char* name) {
    CUkernel kernel = nullptr;
    check(drv.cuLibraryGetKernel(&kernel, lib, name), "cuLibraryGetKernel");
    CUfunction f = nullptr;
    check(drv.cuKernelGetFunction(&f, kernel), "cuKernelGetFunction");
    return f;
  };
  return {lib, function("tma_load_box"), function("tma_copy"), function("plain_load_box"), function("plain_copy")};
}

//! [encode]
// cuTensorMapEncodeTiled's arguments for a tile of floats: every array lists the innermost dimension first.
struct Encoding {
  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  cuuint32_t rank = 2;
  CUdeviceptr address = 0;                            // globalAddress: the matrix's first element
  cuuint64_t dims[6] = {0, 0, 1, 1, 1, 1};            // globalDim: columns, rows
  cuuint64_t strides[5] = {0, 0, 0, 0, 0};            // globalStrides: rank - 1 of them, in bytes
  cuuint32_t box[6] = {8, 4, 1, 1, 1, 1};             // boxDim: columns, rows of the box one copy moves
  cuuint32_t elementStrides[6] = {1, 1, 1, 1, 1, 1};  // every element (dimension 0's is ignored)
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;        // shared memory row by row, as loaded
  CUtensorMapL2promotion l2 = CU_TENSOR_MAP_L2_PROMOTION_NONE;    // no wider L2 fetches than asked
  CUtensorMapFloatOOBfill fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;  // zeros where a box leaves the matrix
};

Encoding tileOf(const Matrix& m, cuuint32_t boxCols, cuuint32_t boxRows) {
  Encoding e;
  e.address = m.base;
  e.dims[0] = m.cols, e.dims[1] = m.rows;
  e.strides[0] = m.pitch;  // from one row to the next: a multiple of 16
  e.box[0] = boxCols, e.box[1] = boxRows;
  return e;
}

CUresult encode(const Encoding& e, CUtensorMap* map) {
  return drv.cuTensorMapEncodeTiled(map, e.type, e.rank, reinterpret_cast<void*>(e.address), e.dims,
                                    e.strides, e.box, e.elementStrides, e.interleave, e.swizzle, e.l2,
                                    e.fill);
}
//! [encode]

CUtensorMap encoded(const Encoding& e) {
  CUtensorMap map;
  check(encode(e, &map), "cuTensorMapEncodeTiled");
  return map;
}

void describeMap(const Matrix& m) {
  CUtensorMap map;
  const CUresult rc = encode(tileOf(m, 8, 4), &map);
  std::printf("matrix: %llu rows of %llu floats, %llu bytes apart (%llu x 4 = %llu, padded to a multiple of 16)\n",
              m.rows, m.cols, m.pitch, m.cols, m.cols * 4);
  std::printf("cuTensorMapEncodeTiled(FLOAT32, rank 2, globalDim {%llu, %llu}, globalStrides {%llu}, boxDim {8, 4}, "
              "elementStrides {1, 1},\n  INTERLEAVE_NONE, SWIZZLE_NONE, L2_PROMOTION_NONE, OOB_FILL_NONE): %s\n",
              m.cols, m.rows, m.pitch, describe(rc).c_str());
  std::printf("the map: %zu opaque bytes, aligned to %zu by its type in this CUDA %d.%d header (the reference asks 64)\n",
              sizeof map, alignof(CUtensorMap), CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
  wb::expect(rc == CUDA_SUCCESS, "the map encoded", describe(rc));
}

//! [rules]
// The valid map above with one argument changed; `allowed`: the change stays inside the rule.
struct RuleCase {
  const char *rule, *passed;
  bool allowed;
  void (*change)(Encoding&);
};
//! [rules]

//! [interleaved]
// The memory as INTERLEAVE_32B lays it out: 8-float chunks, chunks per row, rows; strides multiples of 32.
void interleaved(Encoding& e) {
  e.rank = 3;
  e.dims[2] = e.dims[1], e.dims[1] = e.strides[0] / 32, e.dims[0] = 8;
  e.strides[1] = e.strides[0], e.strides[0] = 32;
  e.box[0] = 8, e.box[1] = 8, e.box[2] = 8;
  e.interleave = CU_TENSOR_MAP_INTERLEAVE_32B;
  e.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
}
//! [interleaved]

const RuleCase kRuleCases[] = {
    //! [rule-list]
    {"tensorRank 1 to 5", "rank 0", false, [](Encoding& e) { e.rank = 0; }},
    {"", "rank 6", false, [](Encoding& e) { e.rank = 6; }},
    {"an interleaved layout: rank 3 or more", "INTERLEAVE_16B at rank 2", false,
     [](Encoding& e) { e.interleave = CU_TENSOR_MAP_INTERLEAVE_16B; }},
    {"globalAddress, 16-byte aligned", "the base + 8 bytes", false, [](Encoding& e) { e.address += 8; }},
    {"", "the base + 16 bytes", true, [](Encoding& e) { e.address += 16; }},
    {"globalDim 1 to 2^32", "globalDim[0] = 0", false, [](Encoding& e) { e.dims[0] = 0; }},
    {"", "globalDim[1] = 2^32 + 1", false, [](Encoding& e) { e.dims[1] = (1ull << 32) + 1; }},
    {"globalStrides, multiples of 16", "globalStrides[0] = 804 (201 floats)", false,
     [](Encoding& e) { e.strides[0] = 804; }},
    {"globalStrides below 2^40", "globalStrides[0] = 2^40", false,
     [](Encoding& e) { e.strides[0] = 1ull << 40; }},
    {"boxDim 1 to 256", "boxDim[1] = 0", false, [](Encoding& e) { e.box[1] = 0; }},
    {"", "boxDim[1] = 257", false, [](Encoding& e) { e.box[1] = 257; }},
    {"", "boxDim[1] = 256", true, [](Encoding& e) { e.box[1] = 256; }},
    {"boxDim[0] x element size, a multiple of 16", "boxDim[0] = 6 (24 bytes)", false,
     [](Encoding& e) { e.box[0] = 6; }},
    {"elementStrides 1 to 8", "elementStrides[1] = 0", false, [](Encoding& e) { e.elementStrides[1] = 0; }},
    {"", "elementStrides[1] = 9", false, [](Encoding& e) { e.elementStrides[1] = 9; }},
    //! [rule-list]
    //! [rule-list-2]
    {"a swizzled box's inner bytes <= the span", "SWIZZLE_64B, box 32 floats (128 B) wide", false,
     [](Encoding& e) { e.swizzle = CU_TENSOR_MAP_SWIZZLE_64B, e.box[0] = 32; }},
    {"", "SWIZZLE_128B, box 32 floats (128 B) wide", true,
     [](Encoding& e) { e.swizzle = CU_TENSOR_MAP_SWIZZLE_128B, e.box[0] = 32; }},
    {"the NaN fill, floating-point types only", "UINT32 with NAN_REQUEST_ZERO_FMA", false,
     [](Encoding& e) {
       e.type = CU_TENSOR_MAP_DATA_TYPE_UINT32, e.fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
     }},
    {"", "FLOAT32 with NAN_REQUEST_ZERO_FMA", true,
     [](Encoding& e) { e.fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA; }},
    {"tensorDataType, a CUtensorMapDataType", "tensorDataType 99", false,
     [](Encoding& e) { e.type = static_cast<CUtensorMapDataType>(99); }},
    //! [rule-list-2]
};

//! [provoke]
void provokeRules(const Matrix& m) {
  int wrong = 0;
  for (const RuleCase& c : kRuleCases) {
    Encoding e = tileOf(m, 8, 4);
    c.change(e);
    alignas(128) CUtensorMap map;
    const CUresult rc = encode(e, &map);
    const bool asDocumented = c.allowed ? rc == CUDA_SUCCESS : rc != CUDA_SUCCESS;
    wrong += !asDocumented;
    std::printf("  %-44s %-42s %s%s\n", c.rule, c.passed, describe(rc).c_str(),
                asDocumented ? "" : "  <- NOT as documented");
  }
  wb::expect(wrong == 0, "every broken rule refused and every allowed change accepted",
             std::to_string(wrong) + " answers otherwise");
}
//! [provoke]

//! [interleaved-answers]
// Printed, not held to the rule: on driver 580 one run refused SWIZZLE_32B here and accepted NONE.
void showInterleaved(const Matrix& m) {
  const std::pair<const char*, void (*)(Encoding&)> cases[] = {
      {"rank 3, 32 B interleaved, SWIZZLE_32B", interleaved},
      {"the same, SWIZZLE_NONE", [](Encoding& e) { interleaved(e), e.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE; }},
      {"the same, the base + 16 bytes", [](Encoding& e) { interleaved(e), e.address += 16; }}};
  std::printf("INTERLEAVE_32B (the reference: SWIZZLE_32B, a 32-byte aligned base), shown, not asserted:\n");
  for (const auto& [what, change] : cases) {
    Encoding e = tileOf(m, 8, 4);
    change(e);
    alignas(128) CUtensorMap map;
    std::printf("  %-44s %s\n", what, describe(encode(e, &map)).c_str());
  }
  // Whether the call checks it the reference does not say: on driver 580 two runs answered differently.
  alignas(128) unsigned char storage[sizeof(CUtensorMap) + 16];
  std::printf("the map's address (the reference: 64-byte aligned), shown, not asserted:\n  %-44s %s\n",
              "a map 16 bytes past a 128-byte aligned address",
              describe(encode(tileOf(m, 8, 4), reinterpret_cast<CUtensorMap*>(storage + 16))).c_str());
}
//! [interleaved-answers]

//! [launch]
// The map is the kernel's `const __grid_constant__` parameter: cuLaunchKernel copies its 128 bytes.
std::vector<float> tmaBox(const Kernels& k, const CUtensorMap& map, int x, int y, int boxCols, int boxRows) {
  CUdeviceptr out = alloc(static_cast<size_t>(boxCols) * boxRows * 4);
  void* args[] = {const_cast<CUtensorMap*>(&map), &x, &y, &boxCols, &boxRows, &out};
  check(drv.cuLaunchKernel(k.tmaLoadBox, 1, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr),
        "cuLaunchKernel(tma_load_box)");
  std::vector<float> box = download(out, static_cast<size_t>(boxCols) * boxRows);  // waits for the kernel
  check(drv.cuMemFree(out), "cuMemFree");
  return box;
}
//! [launch]

std::vector<float> plainBox(const Kernels& k, const Matrix& m, int x, int y, int boxCols, int boxRows) {
  CUdeviceptr out = alloc(static_cast<size_t>(boxCols) * boxRows * 4), base = m.base;
  unsigned long long pitch = m.pitch / 4;
  int cols = static_cast<int>(m.cols), rows = static_cast<int>(m.rows);
  void* args[] = {&base, &pitch, &cols, &rows, &x, &y, &boxCols, &boxRows, &out};
  check(drv.cuLaunchKernel(k.plainLoadBox, 1, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr), "cuLaunchKernel");
  std::vector<float> box = download(out, static_cast<size_t>(boxCols) * boxRows);
  check(drv.cuMemFree(out), "cuMemFree");
  return box;
}

void printBox(const std::string& what, const std::vector<float>& box) {  // rows of 8
  std::printf("%s\n", what.c_str());
  for (size_t i = 0; i < box.size(); ++i) std::printf("%s%8.0f%s", i % 8 ? "" : "   ", box[i], (i + 1) % 8 ? "" : "\n");
}
bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

//! [boxes]
// A box half past the matrix's end with each fill, one before its start, and the plain kernel's boxes.
void boxes(const Kernels& k, const Matrix& m) {
  const int x = static_cast<int>(m.cols) - 4, y = static_cast<int>(m.rows) - 2;
  Encoding zeros = tileOf(m, 8, 4), nans = zeros;
  nans.fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
  const std::vector<float> corner = tmaBox(k, encoded(zeros), x, y, 8, 4),
                           nanCorner = tmaBox(k, encoded(nans), x, y, 8, 4),
                           before = tmaBox(k, encoded(zeros), -4, -2, 8, 4);
  printBox("box at column " + std::to_string(x) + ", row " + std::to_string(y) + ", zero fill:", corner);
  printBox("the same box, NaN fill:", nanCorner);
  printBox("box at column -4, row -2, zero fill:", before);
  bool nanOutside = true;
  for (size_t i = 0; i < nanCorner.size(); ++i)  // inside: the first 4 columns of the first 2 rows
    nanOutside &= i % 8 < 4 && i / 8 < 2 ? nanCorner[i] == corner[i] : std::isnan(nanCorner[i]);
  const bool plainAgrees =
      sameBits(corner, plainBox(k, m, x, y, 8, 4)) && sameBits(before, plainBox(k, m, -4, -2, 8, 4));
  std::printf("the plain kernel's boxes: %s; NaN fill: the matrix's values inside, NaN outside: %s\n",
              plainAgrees ? "the same bits" : "DIFFERENT", nanOutside ? "yes" : "NO");
  wb::expect(plainAgrees && nanOutside,
             "TMA's boxes equal to the plain kernel's, zeros or NaN outside the matrix", "other values");
}
//! [boxes]

constexpr unsigned kBlank = 0xDEADBEEFu;  // what a destination holds before a copy, padding too
Matrix blankLike(const Matrix& m) {
  Matrix b{alloc(m.rows * m.pitch), m.rows, m.cols, m.pitch};
  check(drv.cuMemsetD32(b.base, kBlank, m.rows * m.pitch / 4), "cuMemsetD32");
  return b;
}

struct Compared { size_t different = 0, paddingChanged = 0; };  // elements and padding floats a copy changed
Compared compare(const Matrix& source, const Matrix& copy) {
  const size_t floats = source.rows * source.pitch / 4, pitch = source.pitch / 4;
  const std::vector<float> from = download(source.base, floats), to = download(copy.base, floats);
  Compared c;
  for (size_t i = 0; i < floats; ++i) {
    if (i % pitch < source.cols)
      c.different += std::memcmp(&to[i], &from[i], 4) != 0;
    else
      c.paddingChanged += std::memcmp(&to[i], &kBlank, 4) != 0;
  }
  return c;
}

void launchTmaCopy(const Kernels& k, const CUtensorMap& from, const CUtensorMap& to, const Matrix& m) {
  int boxCols = 64, boxRows = 64;
  void* args[] = {const_cast<CUtensorMap*>(&from), const_cast<CUtensorMap*>(&to), &boxCols, &boxRows};
  const unsigned gx = static_cast<unsigned>((m.cols + 63) / 64), gy = static_cast<unsigned>((m.rows + 63) / 64);
  check(drv.cuLaunchKernel(k.tmaCopy, gx, gy, 1, 32, 1, 1, 0, nullptr, args, nullptr), "cuLaunchKernel(tma_copy)");
}
void launchPlainCopy(const Kernels& k, const Matrix& from, const Matrix& to) {
  CUdeviceptr src = from.base, dst = to.base;
  unsigned long long srcPitch = from.pitch / 4, dstPitch = to.pitch / 4;
  int cols = static_cast<int>(from.cols), rows = static_cast<int>(from.rows);
  void* args[] = {&src, &srcPitch, &dst, &dstPitch, &cols, &rows};
  const unsigned gx = static_cast<unsigned>((from.cols + 31) / 32), gy = static_cast<unsigned>((from.rows + 31) / 32);
  check(drv.cuLaunchKernel(k.plainCopy, gx, gy, 1, 32, 8, 1, 0, nullptr, args, nullptr), "cuLaunchKernel(plain_copy)");
}

//! [copy]
// Sides no multiple of the box. The plain copy must leave the padding alone; the TMA copy's is only shown:
// a row of 999 floats ends inside a 16-byte unit, and on driver 580 one run's TMA store wrote the rest.
void copies(const Kernels& k, const Matrix& source) {
  const Matrix viaTma = blankLike(source), viaPlain = blankLike(source);
  launchTmaCopy(k, encoded(tileOf(source, 64, 64)), encoded(tileOf(viaTma, 64, 64)), source);
  launchPlainCopy(k, source, viaPlain);
  const Compared tma = compare(source, viaTma), plain = compare(source, viaPlain);
  std::printf("%llu x %llu floats, rows %llu bytes apart, boxes of 64 x 64: %llu x %llu blocks\n",
              source.rows, source.cols, source.pitch, (source.cols + 63) / 64, (source.rows + 63) / 64);
  for (const auto& [name, c] : {std::pair{"tma_copy:  ", tma}, std::pair{"plain_copy:", plain}})
    std::printf("%s %zu elements differ from the source, %zu padding floats changed\n", name, c.different,
                c.paddingChanged);
  wb::expect(tma.different == 0 && plain.different == 0 && plain.paddingChanged == 0,
             "both copies exact, the plain copy's padding untouched", "differences");
  if (tma.paddingChanged)
    std::printf("the TMA store wrote %zu padding floats, %.2f a row (shown, not asserted)\n",
                tma.paddingChanged, static_cast<double>(tma.paddingChanged) / source.rows);
  for (const Matrix& m : {viaTma, viaPlain}) check(drv.cuMemFree(m.base), "cuMemFree");
}
//! [copy]

//! [replace]
// One map, two copies: a launch copies the map, so the first reads a and the second, retargeted, b.
void replaceAddress(const Kernels& k, const Matrix& a, const Matrix& b) {
  CUtensorMap source = encoded(tileOf(a, 64, 64));
  const Matrix first = blankLike(a), second = blankLike(a);
  launchTmaCopy(k, source, encoded(tileOf(first, 64, 64)), a);
  check(drv.cuTensorMapReplaceAddress(&source, reinterpret_cast<void*>(b.base)), "cuTensorMapReplaceAddress");
  launchTmaCopy(k, source, encoded(tileOf(second, 64, 64)), a);
  const Compared fromA = compare(a, first), fromB = compare(b, second);
  const CUresult misaligned = drv.cuTensorMapReplaceAddress(&source, reinterpret_cast<void*>(b.base + 8));
  std::printf("first copy, map on a: %zu elements differ from a\n", fromA.different);
  std::printf("after cuTensorMapReplaceAddress(&map, b): the second copy has %zu elements "
              "that differ from b\n", fromB.different);
  std::printf("cuTensorMapReplaceAddress(&map, b + 8 bytes): %s\n", describe(misaligned).c_str());
  wb::expect(fromA.different == 0 && fromB.different == 0 && misaligned != CUDA_SUCCESS,
             "each copy reading the buffer its map named at its launch, and a misaligned address refused",
             "otherwise");
  for (const Matrix& m : {first, second}) check(drv.cuMemFree(m.base), "cuMemFree");
}
//! [replace]

//! [peak]
// Theoretical bandwidth as the CUDA C++ Best Practices Guide computes it (2: double data rate), GB/s.
double peakGBps(CUdevice dev) {
  const double clockKHz = attribute(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  const double busBits = attribute(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  std::printf("memory clock %.0f MHz, bus %.0f bits: peak %.0f GB/s (clock x 2 x width / 8)\n",
              clockKHz / 1000, busBits, clockKHz * 1e3 * 2 * busBits / 8 / 1e9);
  return clockKHz * 1e3 * 2 * busBits / 8 / 1e9;
}
//! [peak]

// One op's median time in ms over 9 runs after 2 warm-ups, by events on the legacy stream (where all run).
template <class Op>
double medianMs(Op&& op) {
  CUevent start = nullptr, stop = nullptr;
  for (CUevent* e : {&start, &stop}) check(drv.cuEventCreate(e, CU_EVENT_DEFAULT), "cuEventCreate");
  std::vector<float> ms;
  for (int i = 0; i < 11; ++i) {
    check(drv.cuEventRecord(start, nullptr), "cuEventRecord");
    op();
    check(drv.cuEventRecord(stop, nullptr), "cuEventRecord");
    check(drv.cuEventSynchronize(stop), "cuEventSynchronize");
    float t = 0;
    check(drv.cuEventElapsedTime(&t, start, stop), "cuEventElapsedTime");
    if (i >= 2) ms.push_back(t);
  }
  for (CUevent e : {start, stop}) check(drv.cuEventDestroy(e), "cuEventDestroy");
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

struct Rates {
  size_t bytes;
  double tma, plain, copy2d, dtod;  // GB/s: bytes read plus bytes written, per second
};
//! [ways]
// One matrix of 8192 floats per row copied four ways. Each reads it once and writes it once.
Rates measure(const Kernels& k, size_t bytes) {
  Matrix from{alloc(bytes), bytes / 32768, 8192, 32768}, to{alloc(bytes), bytes / 32768, 8192, 32768};
  check(drv.cuMemsetD32(from.base, 0x3f800000u, bytes / 4), "cuMemsetD32");  // 1.0f everywhere
  const CUtensorMap src = encoded(tileOf(from, 64, 64)), dst = encoded(tileOf(to, 64, 64));
  CUDA_MEMCPY2D region{};
  region.srcMemoryType = region.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  region.srcDevice = from.base, region.dstDevice = to.base;
  region.srcPitch = region.dstPitch = from.pitch;
  region.WidthInBytes = from.cols * 4, region.Height = from.rows;
  const auto rate = [&](double ms) { return 2.0 * bytes / (ms * 1e-3) / 1e9; };
  Rates r{bytes, 0, 0, 0, 0};
  r.tma = rate(medianMs([&] { launchTmaCopy(k, src, dst, from); }));
  r.plain = rate(medianMs([&] { launchPlainCopy(k, from, to); }));
  r.copy2d = rate(medianMs([&] { check(drv.cuMemcpy2D(&region), "cuMemcpy2D"); }));
  r.dtod = rate(medianMs([&] { check(drv.cuMemcpyDtoD(to.base, from.base, bytes), "cuMemcpyDtoD"); }));
  for (const Matrix& m : {from, to}) check(drv.cuMemFree(m.base), "cuMemFree");
  return r;
}
//! [ways]

//! [sizes]
// Three sizes from 4 x the L2 up (one that fits in L2 measures L2), each leaving a quarter of free memory.
std::vector<Rates> figure(const Kernels& k, CUdevice dev, double peak) {
  const size_t l2 = static_cast<size_t>(attribute(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
  size_t free = 0, total = 0;
  check(drv.cuMemGetInfo(&free, &total), "cuMemGetInfo");
  size_t bytes = 32768;
  while (bytes < 4 * l2) bytes *= 2;
  std::vector<Rates> rates;
  for (int i = 0; i < 3 && 2 * bytes <= free / 4 * 3; ++i, bytes *= 2) rates.push_back(measure(k, bytes));
  std::printf("L2 %s; each size copied, 2 x its bytes moved, GB/s (%% of the peak), median of 9:\n",
              wb::bytes(l2).c_str());
  std::printf("  %10s %18s %18s %18s %18s\n", "size", "tma_copy", "plain_copy", "cuMemcpy2D", "cuMemcpyDtoD");
  bool belowPeak = !rates.empty();
  for (const Rates& r : rates) {
    std::printf("  %10s", wb::bytes(r.bytes).c_str());
    for (double v : {r.tma, r.plain, r.copy2d, r.dtod}) {
      std::printf(" %10.0f (%4.1f%%)", v, 100 * v / peak);
      belowPeak = belowPeak && v < peak;
    }
    std::printf("\n");
  }
  wb::expect(belowPeak, "every way below the DRAM's peak",
             rates.empty() ? "too little free memory to measure" : "a way above it");
  return rates;
}
//! [sizes]

wb::FigureTable tableOf(const std::vector<Rates>& rates, double peak) {
  wb::FigureTable table("bytes,way,GB/s");
  if (!rates.empty()) table.row("0,limit: DRAM peak (memory clock x 2 x bus width / 8),%.1f", peak);
  for (const Rates& r : rates) {
    table.row("%zu,tma_copy (TMA boxes of 64 x 64),%.1f", r.bytes, r.tma);
    table.row("%zu,plain_copy (a float per thread),%.1f", r.bytes, r.plain);
    table.row("%zu,cuMemcpy2D,%.1f", r.bytes, r.copy2d);
    table.row("%zu,cuMemcpyDtoD,%.1f", r.bytes, r.dtod);
  }
  return table;
}

int main(int argc, char** argv) {
  wb::FigurePaths paths;
  if (!wb::parseFigureArgs(argc, argv, paths, "lesson21-figure.csv")) return wb::kExitUsage;
  try {
    wb::checkEnvironment({});  // no variable changes what this lesson shows (device choice and the driver's log are noted)
    // The image is checked before the driver is opened: a damaged one stops the program in a moment.
    const std::vector<char> image = wb::readVerifiedImage("tensor_maps.fatbin");
    const wb::LoadedDriver driver;  // dlopen("libcuda.so.1"); it stays loaded for the process's life
    wb::step(1, "The driver, opened at run time");
    const int driverVersion = openDriver(driver);
    takeAll(driver);
    // cuInit before anything else is asked: without a device the program says so, and nothing more.
    const CUresult init = drv.cuInit(0);
    if (wb::classifyInit(init) == wb::InitAnswer::NoDevice) {
      const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
      throw Unusable(std::string("The driver is loaded but sees no CUDA device") +
                     (visible ? std::string(" (CUDA_VISIBLE_DEVICES is '") + visible + "')" : "") +
                     ".\nWhat to do: check that nvidia-smi lists a GPU and that CUDA_VISIBLE_DEVICES names it.");
    }
    check(init, "cuInit");
    std::printf("%zu entry points taken with cuGetProcAddress, each at the version of its PFN_ type\n",
                sizeof(Api) / sizeof(void*));
    askAtVersions(driver, driverVersion);
    wb::step(2, "What the program needs to start");
    whatStartNeeds();
    wb::step(3, "The runtime's way: cudaGetDriverEntryPointByVersion");
    fromRuntime();
    CUdevice dev = 0;
    check(drv.cuDeviceGet(&dev, 0), "cuDeviceGet");
    const int major = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
              minor = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    const bool tma = wb::meetsComputeCapability(major, minor);  // lessons/needs.tsv: 9.0 for tensor maps and TMA
    CUcontext primary = nullptr;
    check(drv.cuDevicePrimaryCtxRetain(&primary, dev), "cuDevicePrimaryCtxRetain");
    check(drv.cuCtxSetCurrent(primary), "cuCtxSetCurrent");
    const Kernels k = loadKernels(image);
    const Matrix small = newMatrix(300, 200, 208, 0.0f);  // 832-byte rows
    const Matrix odd = newMatrix(1000, 999, 1000, 0.0f), other = newMatrix(1000, 999, 1000, 2000000.0f);
    char name[128] = {};
    check(drv.cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName");
    const std::string noTma = std::string("skipped: ") + name + " has compute capability " + std::to_string(major) + "." +
                              std::to_string(minor) + "; the reference: tensor map objects are only supported on "
                              "devices of compute capability 9.0 or higher\n";
    wb::step(4, "A tensor map for a tile of a row-major matrix");
    std::printf("device 0: %s, compute capability %d.%d\n", name, major, minor);
    if (tma) describeMap(small); else std::printf("%s", noTma.c_str());
    wb::step(5, "Every rule, and its refusal");
    if (tma) provokeRules(small), showInterleaved(small); else std::printf("%s", noTma.c_str());
    wb::step(6, "The map as a kernel parameter: a box, and what lies outside the matrix");
    if (tma) boxes(k, small); else std::printf("%s", noTma.c_str());
    wb::step(7, "A TMA copy checked against a plain copy");
    if (tma) copies(k, odd); else std::printf("%s", noTma.c_str());
    wb::step(8, "Another buffer, the same map: cuTensorMapReplaceAddress");
    if (tma) replaceAddress(k, odd, other); else std::printf("%s", noTma.c_str());
    wb::step(9, "TMA, plain loads and the copy calls, against the DRAM's peak");
    const bool timed = tma && !wb::underSanitizer();
    if (!tma) std::printf("%s", noTma.c_str());
    else if (!timed) std::printf("left out under compute-sanitizer, which slows every kernel and copy\n");
    const double peak = timed ? peakGBps(dev) : 0;
    const std::vector<Rates> rates = timed ? figure(k, dev, peak) : std::vector<Rates>{};
    for (const Matrix& m : {small, odd, other}) check(drv.cuMemFree(m.base), "cuMemFree");
    check(drv.cuLibraryUnload(k.library), "cuLibraryUnload");
    check(drv.cuCtxSetCurrent(nullptr), "cuCtxSetCurrent");
    check(drv.cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease");
    return tableOf(rates, peak).save(paths.csv, 9);
  } catch (const Unusable& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return wb::kExitNoGpu;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}
