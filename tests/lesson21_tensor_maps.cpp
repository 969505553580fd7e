// Lesson 21's claims: the program names no libcuda.so.1 and no CUDA runtime library in its ELF file
// and imports no driver function, so the loader starts it without a driver; cuGetProcAddress from a
// dlopened libcuda answers cuTensorMapEncodeTiled's own version, an older one and one newer than
// the driver as its reference documents, and the runtime's cudaGetDriverEntryPointByVersion hands
// out the same function; cuTensorMapEncodeTiled refuses each documented rule broken (the reference
// lists CUDA_ERROR_INVALID_VALUE for an argument it refuses) and accepts the changes inside the
// rules; a TMA kernel's box equals a plain kernel's, with zeros or NaN outside the matrix and
// negative coordinates allowed; a TMA copy of a matrix whose sides are no multiple of the box is
// exact and leaves the padding alone; a map is copied at launch, so cuTensorMapReplaceAddress
// between two launches retargets the second only (shown with the first still held behind a gate);
// and no copy, four ways, beats the DRAM peak the device's attributes give. A device of compute
// capability below 9.0 has no TMA: those cases report themselves skipped (wbt::skipCase).
#include "damaged_images.hpp"
#include "gate.hpp"
#include "loaded_driver.hpp"
#include "machine.hpp"
#include "support.hpp"

#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

// Device 0's primary context, current, with the lesson's kernels and the gate's loaded into it
// (before any gate closes: lazy loading would make a first launch wait for the gate).
struct Lab {
  CUdevice dev = wbt::deviceKeepingPrimary(0);
  wbt::RetainedPrimary primary{dev};
  wbt::Pushed current{primary.get()};
  CUlibrary maps = nullptr, streams = nullptr;
  CUfunction tmaLoadBox = nullptr, tmaCopy = nullptr, plainLoadBox = nullptr, plainCopy = nullptr;
  wb::StreamKernels k;
  Lab() {
    const std::vector<char> image = wb::readVerifiedImage("tensor_maps.fatbin");
    CU_CHECK(cuLibraryLoadData(&maps, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    tmaLoadBox = wbt::functionOf(maps, "tma_load_box");
    tmaCopy = wbt::functionOf(maps, "tma_copy");
    plainLoadBox = wbt::functionOf(maps, "plain_load_box");
    plainCopy = wbt::functionOf(maps, "plain_copy");
    CU_CHECK(cuLibraryLoadFromFile(&streams, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    k = wb::StreamKernels::load(streams);
  }
  ~Lab() {
    cuLibraryUnload(maps);
    cuLibraryUnload(streams);
  }
  bool tma() const { return wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) >= 9; }
};

constexpr const char* kNoTma = "the device's compute capability is below 9.0: no tensor maps, no TMA";

// A row-major float matrix in device memory, freed at scope exit: element (r, c) holds
// seed + 1000 r + c, the padding the bits 0xDEADBEEF (or every float, with blank()).
struct Matrix {
  uint64_t rows, cols, pitch;  // pitch in bytes
  wbt::DeviceBuffer memory;
  Matrix(uint64_t rows_, uint64_t cols_, uint64_t pitchFloats, float seed, bool blank = false)
      : rows(rows_), cols(cols_), pitch(pitchFloats * 4), memory(rows_ * pitchFloats * 4) {
    CU_CHECK(cuMemsetD32(memory.get(), 0xDEADBEEFu, rows * pitchFloats));
    if (!blank) {
      std::vector<float> host(rows * pitchFloats);
      CU_CHECK(cuMemcpyDtoH(host.data(), memory.get(), host.size() * 4));
      for (uint64_t r = 0; r < rows; ++r)
        for (uint64_t c = 0; c < cols; ++c) host[r * pitchFloats + c] = seed + 1000.0f * r + c;
      CU_CHECK(cuMemcpyHtoD(memory.get(), host.data(), host.size() * 4));
    }
    // Both may return before they land (a memset of device memory, a copy from pageable memory),
    // and a non-blocking stream does not wait for the legacy stream they ran in.
    CU_CHECK(cuCtxSynchronize());
  }
  CUdeviceptr base() const { return memory.get(); }
  std::vector<float> read() const {
    std::vector<float> host(rows * pitch / 4);
    CU_CHECK(cuMemcpyDtoH(host.data(), memory.get(), host.size() * 4));
    return host;
  }
};

// cuTensorMapEncodeTiled's arguments: a tile of a row-major float matrix, innermost dimension first.
struct Encoding {
  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  cuuint32_t rank = 2;
  CUdeviceptr address = 0;
  cuuint64_t dims[6] = {0, 0, 1, 1, 1, 1};
  cuuint64_t strides[5] = {0, 0, 0, 0, 0};
  cuuint32_t box[6] = {8, 4, 1, 1, 1, 1};
  cuuint32_t elementStrides[6] = {1, 1, 1, 1, 1, 1};
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2 = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  CUtensorMapFloatOOBfill fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  size_t mapOffset = 0;  // where the map lies past a 128-byte aligned address

  Encoding(const Matrix& m, cuuint32_t boxCols, cuuint32_t boxRows) : address(m.base()) {
    dims[0] = m.cols, dims[1] = m.rows, strides[0] = m.pitch, box[0] = boxCols, box[1] = boxRows;
  }
  CUresult encode(CUtensorMap* map) const {
    return cuTensorMapEncodeTiled(map, type, rank, reinterpret_cast<void*>(address), dims, strides, box,
                                  elementStrides, interleave, swizzle, l2, fill);
  }
  CUresult encodeAtOffset() const {
    alignas(128) unsigned char storage[sizeof(CUtensorMap) + 128];
    return encode(reinterpret_cast<CUtensorMap*>(storage + mapOffset));
  }
  CUtensorMap map() const {
    CUtensorMap m;
    CU_CHECK(encode(&m));
    return m;
  }
};

std::vector<float> download(CUdeviceptr p, size_t floats) {
  std::vector<float> v(floats);
  CU_CHECK(cuMemcpyDtoH(v.data(), p, floats * 4));
  return v;
}

std::vector<float> tmaBox(const Lab& lab, const CUtensorMap& map, int x, int y, int boxCols, int boxRows) {
  wbt::DeviceBuffer out(static_cast<size_t>(boxCols) * boxRows * 4);
  CUdeviceptr o = out.get();
  void* args[] = {const_cast<CUtensorMap*>(&map), &x, &y, &boxCols, &boxRows, &o};
  CU_CHECK(cuLaunchKernel(lab.tmaLoadBox, 1, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr));
  return download(o, static_cast<size_t>(boxCols) * boxRows);
}

std::vector<float> plainBox(const Lab& lab, const Matrix& m, int x, int y, int boxCols, int boxRows) {
  wbt::DeviceBuffer out(static_cast<size_t>(boxCols) * boxRows * 4);
  CUdeviceptr base = m.base(), o = out.get();
  unsigned long long pitch = m.pitch / 4;
  int cols = static_cast<int>(m.cols), rows = static_cast<int>(m.rows);
  void* args[] = {&base, &pitch, &cols, &rows, &x, &y, &boxCols, &boxRows, &o};
  CU_CHECK(cuLaunchKernel(lab.plainLoadBox, 1, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr));
  return download(o, static_cast<size_t>(boxCols) * boxRows);
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

void tmaCopy(const Lab& lab, const CUtensorMap& from, const CUtensorMap& to, const Matrix& m, CUstream s = nullptr) {
  int boxCols = 64, boxRows = 64;
  void* args[] = {const_cast<CUtensorMap*>(&from), const_cast<CUtensorMap*>(&to), &boxCols, &boxRows};
  CU_CHECK(cuLaunchKernel(lab.tmaCopy, static_cast<unsigned>((m.cols + 63) / 64), static_cast<unsigned>((m.rows + 63) / 64),
                          1, 32, 1, 1, 0, s, args, nullptr));
}

void plainCopy(const Lab& lab, const Matrix& from, const Matrix& to) {
  CUdeviceptr src = from.base(), dst = to.base();
  unsigned long long srcPitch = from.pitch / 4, dstPitch = to.pitch / 4;
  int cols = static_cast<int>(from.cols), rows = static_cast<int>(from.rows);
  void* args[] = {&src, &srcPitch, &dst, &dstPitch, &cols, &rows};
  CU_CHECK(cuLaunchKernel(lab.plainCopy, static_cast<unsigned>((from.cols + 31) / 32),
                          static_cast<unsigned>((from.rows + 31) / 32), 1, 32, 8, 1, 0, nullptr, args, nullptr));
}

// Whether copy holds source's elements, bit for bit (the padding between rows aside).
bool exactCopy(const Matrix& source, const Matrix& copy) {
  const std::vector<float> from = source.read(), to = copy.read();
  const uint64_t pitch = source.pitch / 4;
  for (uint64_t r = 0; r < source.rows; ++r)
    if (std::memcmp(&to[r * pitch], &from[r * pitch], source.cols * 4) != 0) return false;
  return true;
}

// How many padding floats of copy are no longer the bits 0xDEADBEEF. Not asserted: the reference
// does not say whether a TMA store may write the rest of the 16 bytes a row ends in (on driver 580
// one run wrote the float after each 999-float row, another did not).
size_t paddingChanged(const Matrix& copy) {
  const std::vector<float> to = copy.read();
  const uint32_t blank = 0xDEADBEEFu;
  const uint64_t pitch = copy.pitch / 4;
  size_t changed = 0;
  for (uint64_t r = 0; r < copy.rows; ++r)
    for (uint64_t i = copy.cols; i < pitch; ++i) changed += std::memcmp(&to[r * pitch + i], &blank, 4) != 0;
  return changed;
}

}  // namespace

TEST_SUITE("no-libcuda") {
  TEST_CASE("the program names neither libcuda.so.1 nor the CUDA runtime in DT_NEEDED and imports no driver function") {
    const wb::DynamicSection program = wb::readDynamicSection(WORKBOOK_LESSON_PROGRAM);
    REQUIRE(program.read);
    std::string needed, driverImports;
    for (const std::string& n : program.needed) needed += n + " ";
    for (const std::string& s : program.imported)
      if (s.size() > 2 && s.compare(0, 2, "cu") == 0 && std::isupper(static_cast<unsigned char>(s[2]))) driverImports += s + " ";
    CAPTURE(needed);
    CAPTURE(driverImports);
    CHECK(!program.needed.empty());  // a dynamic program: the list was read, not missing
    CHECK(needed.find("libcuda") == std::string::npos);
    CHECK(needed.find("libcudart") == std::string::npos);
    CHECK(driverImports.empty());
  }
}

TEST_SUITE("entry-points") {
  TEST_CASE("from a dlopened libcuda, cuGetProcAddress gives cuTensorMapEncodeTiled at 12000, no pointer and VERSION_NOT_SUFFICIENT at 11080, CUDA_ERROR_INVALID_VALUE past the driver's version") {
    Lab lab;
    const wb::LoadedDriver driver;
    REQUIRE(driver.opened());
    int version = 0;
    REQUIRE(driver.version(&version) == CUDA_SUCCESS);
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult rc = CUDA_ERROR_UNKNOWN;
    auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(driver.lookUp("cuTensorMapEncodeTiled", 12000, &status, &rc));
    CHECK(rc == CUDA_SUCCESS);
    CHECK(status == CU_GET_PROC_ADDRESS_SUCCESS);
    REQUIRE(reinterpret_cast<void*>(encode) != nullptr);
    const void* older = driver.lookUp("cuTensorMapEncodeTiled", 11080, &status, &rc);
    CHECK(rc == CUDA_SUCCESS);
    CHECK(status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    CHECK(older == nullptr);
    const void* newer = driver.lookUp("cuTensorMapEncodeTiled", version + 10, &status, &rc);
    CHECK(rc == CUDA_ERROR_INVALID_VALUE);
    CHECK(newer == nullptr);
    if (!lab.tma()) return wbt::skipCase(std::string("the lookups passed; encoding needs TMA: ") + kNoTma);
    Matrix m(300, 200, 208, 0.0f);
    const Encoding e(m, 8, 4);
    CUtensorMap map;
    CHECK(encode(&map, e.type, e.rank, reinterpret_cast<void*>(e.address), e.dims, e.strides, e.box, e.elementStrides,
                 e.interleave, e.swizzle, e.l2, e.fill) == CUDA_SUCCESS);
  }

  TEST_CASE("cudaGetDriverEntryPointByVersion gives the same cuTensorMapEncodeTiled as cuGetProcAddress, as observed on driver 580") {
#if CUDART_VERSION >= 12050
    const wb::LoadedDriver driver;
    REQUIRE(driver.opened());
    const void* fromDriver = driver.lookUp("cuTensorMapEncodeTiled", 12000);
    void* fromRuntime = nullptr;
    cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
    CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fromRuntime, 12000, cudaEnableDefault, &status) ==
          cudaSuccess);
    CHECK(status == cudaDriverEntryPointSuccess);
    REQUIRE(fromRuntime != nullptr);
    CHECK(fromRuntime == fromDriver);
#else
    return wbt::skipCase("cudaGetDriverEntryPointByVersion needs CUDA 12.5 or newer");
#endif
  }
}

TEST_SUITE("encode") {
  TEST_CASE("a 2D tile of a row-major float matrix encodes; CUtensorMap is 128 bytes, aligned to 64 or more by its type") {
    Lab lab;
    if (!lab.tma()) return wbt::skipCase(kNoTma);
    Matrix m(300, 200, 208, 0.0f);
    CUtensorMap map;
    CHECK(Encoding(m, 8, 4).encode(&map) == CUDA_SUCCESS);
    CHECK(sizeof(CUtensorMap) == 128);
    CHECK(alignof(CUtensorMap) >= 64);
  }

  TEST_CASE("each documented rule broken, one at a time, is refused with CUDA_ERROR_INVALID_VALUE") {
    Lab lab;
    if (!lab.tma()) return wbt::skipCase(kNoTma);
    Matrix m(300, 200, 208, 0.0f);
    struct Broken {
      const char* what;
      void (*change)(Encoding&);
    };
    const Broken cases[] = {
        {"rank 0", [](Encoding& e) { e.rank = 0; }},
        {"rank 6", [](Encoding& e) { e.rank = 6; }},
        {"INTERLEAVE_16B at rank 2", [](Encoding& e) { e.interleave = CU_TENSOR_MAP_INTERLEAVE_16B; }},
        {"globalAddress + 8", [](Encoding& e) { e.address += 8; }},
        {"globalDim[0] = 0", [](Encoding& e) { e.dims[0] = 0; }},
        {"globalDim[1] = 2^32 + 1", [](Encoding& e) { e.dims[1] = (1ull << 32) + 1; }},
        {"globalStrides[0] = 804", [](Encoding& e) { e.strides[0] = 804; }},
        {"globalStrides[0] = 2^40", [](Encoding& e) { e.strides[0] = 1ull << 40; }},
        {"boxDim[1] = 0", [](Encoding& e) { e.box[1] = 0; }},
        {"boxDim[1] = 257", [](Encoding& e) { e.box[1] = 257; }},
        {"boxDim[0] = 6 floats (24 bytes)", [](Encoding& e) { e.box[0] = 6; }},
        {"elementStrides[1] = 0", [](Encoding& e) { e.elementStrides[1] = 0; }},
        {"elementStrides[1] = 9", [](Encoding& e) { e.elementStrides[1] = 9; }},
        {"SWIZZLE_64B with a 128-byte inner box", [](Encoding& e) { e.swizzle = CU_TENSOR_MAP_SWIZZLE_64B, e.box[0] = 32; }},
        {"UINT32 with NAN_REQUEST_ZERO_FMA",
         [](Encoding& e) { e.type = CU_TENSOR_MAP_DATA_TYPE_UINT32, e.fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA; }},
        {"tensorDataType 99", [](Encoding& e) { e.type = static_cast<CUtensorMapDataType>(99); }},
    };
    for (const Broken& c : cases) {
      const std::string what = c.what;
      CAPTURE(what);
      Encoding e(m, 8, 4);
      c.change(e);
      CHECK(e.encodeAtOffset() == CUDA_ERROR_INVALID_VALUE);
    }
  }

  TEST_CASE("the changes inside the rules are accepted: globalAddress + 16, boxDim 256, SWIZZLE_128B with a 128-byte inner box, NaN fill for FLOAT32") {
    Lab lab;
    if (!lab.tma()) return wbt::skipCase(kNoTma);
    Matrix m(300, 200, 208, 0.0f);
    void (*const allowed[])(Encoding&) = {
        [](Encoding& e) { e.address += 16; },
        [](Encoding& e) { e.box[1] = 256; },
        [](Encoding& e) { e.swizzle = CU_TENSOR_MAP_SWIZZLE_128B, e.box[0] = 32; },
        [](Encoding& e) { e.fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA; },
    };
    int index = 0;
    for (auto change : allowed) {
      CAPTURE(index++);
      Encoding e(m, 8, 4);
      change(e);
      CHECK(e.encodeAtOffset() == CUDA_SUCCESS);
    }
  }
}

TEST_SUITE("tma-load") {
  TEST_CASE("a box half outside the matrix: TMA's equals a plain kernel's with zeros outside; with the NaN fill, NaN outside") {
    Lab lab;
    if (!lab.tma()) return wbt::skipCase(kNoTma);
    Matrix m(300, 200, 208, 0.0f);
    Encoding zeros(m, 8, 4), nans(m, 8, 4);
    nans.fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    const std::vector<float> box = tmaBox(lab, zeros.map(), 196, 298, 8, 4);
    CHECK(sameBits(box, plainBox(lab, m, 196, 298, 8, 4)));
    CHECK(box[0] == 298196.0f);  // the box's first element is the matrix's at (298, 196)
    CHECK(box[31] == 0.0f);
    const std::vector<float> nanBox = tmaBox(lab, nans.map(), 196, 298, 8, 4);
    for (size_t i = 0; i < nanBox.size(); ++i) {
      CAPTURE(i);
      if (i % 8 < 4 && i / 8 < 2)
        CHECK(nanBox[i] == box[i]);
      else
        CHECK(std::isnan(nanBox[i]));
    }
  }

  TEST_CASE("a box whose corner lies before the first row and column loads, zeros where it lies outside") {
    Lab lab;
    if (!lab.tma()) return wbt::skipCase(kNoTma);
    Matrix m(300, 200, 208, 0.0f);
    const std::vector<float> box = tmaBox(lab, Encoding(m, 8, 4).map(), -4, -2, 8, 4);
    CHECK(sameBits(box, plainBox(lab, m, -4, -2, 8, 4)));
    CHECK(box[0] == 0.0f);             // outside
    CHECK(box[2 * 8 + 5] == 1.0f);     // the matrix's row 0, column 1
    CHECK(box[3 * 8 + 7] == 1003.0f);  // row 1, column 3
  }
}

TEST_SUITE("tma-copy") {
  TEST_CASE("a 1000 x 999 matrix, no multiple of the 64 x 64 box: the TMA copy and the plain copy are exact, the plain one leaves the padding alone") {
    Lab lab;
    if (!lab.tma()) return wbt::skipCase(kNoTma);
    const Matrix source(1000, 999, 1000, 0.0f), viaTma(1000, 999, 1000, 0.0f, true), viaPlain(1000, 999, 1000, 0.0f, true);
    tmaCopy(lab, Encoding(source, 64, 64).map(), Encoding(viaTma, 64, 64).map(), source);
    plainCopy(lab, source, viaPlain);
    CHECK(exactCopy(source, viaTma));
    CHECK(exactCopy(source, viaPlain));
    CHECK(paddingChanged(viaPlain) == 0);  // the plain kernel writes only the matrix's own floats
    MESSAGE("padding floats the TMA copy changed (not asserted): " << paddingChanged(viaTma));
  }
}

TEST_SUITE("replace-address") {
  TEST_CASE("the map is copied at launch: replaced between two launches held behind a gate, the first copy reads the old buffer and the second the new one") {
    Lab lab;
    if (!lab.tma()) return wbt::skipCase(kNoTma);
    const Matrix a(1000, 999, 1000, 0.0f), b(1000, 999, 1000, 2000000.0f);
    const Matrix first(1000, 999, 1000, 0.0f, true), second(1000, 999, 1000, 0.0f, true);
    CUtensorMap source = Encoding(a, 64, 64).map();
    const CUtensorMap toFirst = Encoding(first, 64, 64).map(), toSecond = Encoding(second, 64, 64).map();
    wbt::Stream s;
    {
      wb::Gate gate(lab.k.gate, s.get());
      tmaCopy(lab, source, toFirst, a, s.get());
      CHECK(cuTensorMapReplaceAddress(&source, reinterpret_cast<void*>(b.base())) == CUDA_SUCCESS);
      tmaCopy(lab, source, toSecond, a, s.get());
      REQUIRE(gate.outcome() == wb::Gate::Waiting);  // neither copy has run yet
      gate.open();
      s.sync();
    }
    CHECK(exactCopy(a, first));
    CHECK(exactCopy(b, second));
  }

  TEST_CASE("cuTensorMapReplaceAddress refuses an address the map's alignment rule refuses, with CUDA_ERROR_INVALID_VALUE") {
    Lab lab;
    if (!lab.tma()) return wbt::skipCase(kNoTma);
    const Matrix a(1000, 999, 1000, 0.0f);
    CUtensorMap map = Encoding(a, 64, 64).map();
    CHECK(cuTensorMapReplaceAddress(&map, reinterpret_cast<void*>(a.base() + 8)) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuTensorMapReplaceAddress(&map, reinterpret_cast<void*>(a.base() + 16)) == CUDA_SUCCESS);
  }
}

TEST_SUITE("bandwidth") {
  TEST_CASE("a matrix at least 4 times the L2 cache, copied by TMA, plain loads, cuMemcpy2D and cuMemcpyDtoD: each below the DRAM peak the attributes give") {
    Lab lab;
    if (!lab.tma()) return wbt::skipCase(kNoTma);
    const double peak = 2.0 * wbt::attribute(lab.dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) * 1e3 *
                        wbt::attribute(lab.dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH) / 8 / 1e9;
    size_t bytes = 32768;
    while (bytes < 4 * static_cast<size_t>(wbt::attribute(lab.dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE))) bytes *= 2;
    if (2 * bytes > wbt::freeMemory() / 2) return wbt::skipCase("too little free memory for two matrices of " + wb::bytes(bytes));
    const Matrix from(bytes / 32768, 8192, 8192, 0.0f, true), to(bytes / 32768, 8192, 8192, 0.0f, true);
    CU_CHECK(cuMemsetD32(from.base(), 0x3f800000u, bytes / 4));  // 1.0f everywhere
    const CUtensorMap src = Encoding(from, 64, 64).map(), dst = Encoding(to, 64, 64).map();
    CUDA_MEMCPY2D region{};
    region.srcMemoryType = region.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    region.srcDevice = from.base(), region.dstDevice = to.base();
    region.srcPitch = region.dstPitch = from.pitch;
    region.WidthInBytes = from.cols * 4, region.Height = from.rows;
    CUevent start = nullptr, stop = nullptr;
    CU_CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
    CU_CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT));
    const auto gbps = [&](auto op) {  // the best of 5, after one warm-up: the least favourable for the claim
      float best = 1e30f;
      op();
      for (int i = 0; i < 5; ++i) {
        CU_CHECK(cuEventRecord(start, nullptr));
        op();
        CU_CHECK(cuEventRecord(stop, nullptr));
        CU_CHECK(cuEventSynchronize(stop));
        float ms = 0;
        CU_CHECK(cuEventElapsedTime(&ms, start, stop));
        best = std::min(best, ms);
      }
      return 2.0 * bytes / (best * 1e-3) / 1e9;
    };
    const double tma = gbps([&] { tmaCopy(lab, src, dst, from); });
    const bool tmaExact = sameBits(from.read(), to.read());
    const double plain = gbps([&] { plainCopy(lab, from, to); });
    const double copy2d = gbps([&] { CU_CHECK(cuMemcpy2D(&region)); });
    const double dtod = gbps([&] { CU_CHECK(cuMemcpyDtoD(to.base(), from.base(), bytes)); });
    cuEventDestroy(start);
    cuEventDestroy(stop);
    MESSAGE(wb::bytes(bytes) << ": peak " << peak << " GB/s; tma_copy " << tma << ", plain_copy " << plain
                             << ", cuMemcpy2D " << copy2d << ", cuMemcpyDtoD " << dtod);
    CHECK(tmaExact);
    CHECK(sameBits(from.read(), to.read()));
    for (double rate : {tma, plain, copy2d, dtod}) {
      CHECK(rate > 0);
      CHECK(rate < peak);
    }
  }
}

TEST_SUITE("damaged-images") {
  TEST_CASE("pointed at an empty folder or at damaged images, the program stops in seconds, naming the file") {
    wbt::checkProgramRefusesDamagedImages(WORKBOOK_LESSON_PROGRAM);
  }
}
