// The checks of lesson 21's exercises (lessons/21-tensor-maps/exercises.cpp). Drivers this machine
// does not have (a 12.4 driver, an 11.8 one, the toolkit's stub, one without the encoder) are
// copies of a fake libcuda (21-tensor-maps/fake_driver.cpp, built as WORKBOOK_FAKE_DRIVER), each
// case its own copy, so whether the learner's code left a copy open is dlopen(RTLD_NOLOAD)'s answer.
// The encoder the learner calls in exercise 2 is the check's own, which records its arguments.
#include "check.hpp"
#include "scratch.hpp"
#include "21-tensor-maps/exercises.hpp"

#include <dlfcn.h>
#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef WORKBOOK_FAKE_DRIVER  // lessons/CMakeLists.txt defines it; the other-headers check compiles without
#define WORKBOOK_FAKE_DRIVER ""
#endif

namespace {

// ---- Exercise 1 ----------------------------------------------------------------------------------

constexpr cuuint64_t kFakeMark = 0xFA4EC0DEull;  // what the fake encoder writes (fake_driver.cpp)

// A copy of the fake driver in a folder of its own, named libcuda.so.1, and the driver it plays.
struct FakeDriver {
  wb::ScratchDir dir;
  std::string path = dir.path() + "/libcuda.so.1";
  explicit FakeDriver(const char* plays) {
    std::filesystem::copy_file(WORKBOOK_FAKE_DRIVER, path);
    setenv("WBX_FAKE_CUDA", plays, 1);
  }
  ~FakeDriver() { unsetenv("WBX_FAKE_CUDA"); }
  // Whether the copy is loaded in this process now (it leaves the count of opens as it was).
  bool loaded() const {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (h) dlclose(h);
    return h != nullptr;
  }
  // Whether the copy's symbols are among the process's global ones (a copy opened RTLD_GLOBAL):
  // wbxFakeLastAsked is the fake's alone.
  static bool global() { return dlsym(RTLD_DEFAULT, "wbxFakeLastAsked") != nullptr; }
  int lastAsked() const {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(h != nullptr);
    const auto asked = reinterpret_cast<int (*)()>(dlsym(h, "wbxFakeLastAsked"));
    const int v = asked ? asked() : -1;
    dlclose(h);
    return v;
  }
};

// What findTensorMapEncoder did: returned a pointer, or threw std::runtime_error with a message.
struct Found {
  PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  bool threw = false;
  std::string message;
};

Found find(const std::string& path) {
  Found f;
  try {
    f.fn = ex21::findTensorMapEncoder(path);
  } catch (const std::runtime_error& e) {
    f.threw = true;
    f.message = e.what();
  }
  return f;
}

// The file a function's code lies in, as the loader names it, with links resolved.
std::string fileOf(const void* fn) {
  Dl_info info{};
  if (!fn || !dladdr(fn, &info) || !info.dli_fname) return "";
  std::error_code ec;
  const auto real = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::string(info.dli_fname) : real.string();
}

std::string canonical(const std::string& path) { return std::filesystem::canonical(path).string(); }

// A driver with tensor maps: the encoder its cuGetProcAddress gives at 12000, from that copy, the
// copy left open and kept out of the process's global symbols.
void expectFound(const char* plays) {
  FakeDriver fake(plays);
  const Found f = find(fake.path);
  const std::string playing = plays;
  CAPTURE(playing);
  CAPTURE(f.message);
  REQUIRE_FALSE(f.threw);
  REQUIRE(reinterpret_cast<void*>(f.fn) != nullptr);
  CHECK(fileOf(reinterpret_cast<void*>(f.fn)) == canonical(fake.path));
  REQUIRE(fake.loaded());  // before the call: a closed library's function is gone
  CHECK(fake.lastAsked() == 12000);
  CHECK_MESSAGE(!FakeDriver::global(), "the library was opened RTLD_GLOBAL: its symbols joined the process's");
  CUtensorMap map{};
  CHECK(f.fn(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, nullptr, nullptr, nullptr, nullptr, nullptr,
             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS);
  CHECK(map.opaque[0] == kFakeMark);
}

// A driver that cannot give the encoder: the throw, naming the path and why, and the copy closed.
void expectRefused(const char* plays, const char* why) {
  FakeDriver fake(plays);
  const Found f = find(fake.path);
  const std::string playing = plays;
  CAPTURE(playing);
  CAPTURE(f.message);
  CHECK(f.threw);
  CHECK(reinterpret_cast<void*>(f.fn) == nullptr);
  CHECK(f.message.find(fake.path) != std::string::npos);
  if (why) CHECK(f.message.find(why) != std::string::npos);
  CHECK_FALSE(fake.loaded());
}

// ---- Exercise 2 ----------------------------------------------------------------------------------

// Every argument the learner's encodeTile passed to encode, and what the driver answered.
struct Recorded {
  int calls = 0;
  CUtensorMap* map = nullptr;
  CUtensorMapDataType type{};
  cuuint32_t rank = 0;
  void* address = nullptr;
  std::vector<cuuint64_t> dims, strides;
  std::vector<cuuint32_t> box, elementStrides;
  CUtensorMapInterleave interleave{};
  CUtensorMapSwizzle swizzle{};
  CUtensorMapL2promotion l2{};
  CUtensorMapFloatOOBfill fill{};
  CUresult answer = CUDA_ERROR_UNKNOWN;
};
Recorded recorded;

CUresult CUDAAPI recordingEncode(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, void* address,
                                 const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                                 const cuuint32_t* elementStrides, CUtensorMapInterleave interleave,
                                 CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill fill) {
  Recorded& r = recorded;
  ++r.calls;
  r.map = map, r.type = type, r.rank = rank, r.address = address;
  const cuuint32_t n = rank <= 5 ? rank : 0;  // a rank past 5 is refused, and its arrays not read
  r.dims.assign(dims, dims + n);
  r.strides.assign(strides, strides + (n ? n - 1 : 0));
  r.box.assign(box, box + n);
  r.elementStrides.assign(elementStrides, elementStrides + n);
  r.interleave = interleave, r.swizzle = swizzle, r.l2 = l2, r.fill = fill;
  r.answer = cuTensorMapEncodeTiled(map, type, rank, address, dims, strides, box, elementStrides, interleave,
                                    swizzle, l2, fill);
  return r.answer;
}

// The primary context of device 0, current, or a skip where the device has no tensor maps.
struct Ctx {
  CUdevice dev = wbt::deviceKeepingPrimary(0);
  wbt::RetainedPrimary primary{dev};
  wbt::Pushed current{primary.get()};
  Ctx() {
    if (wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) < 9)
      throw wbx::Skipped("the device's compute capability is below 9.0: no tensor maps");
  }
};

// One encodeTile call on a matrix and a tile, recorded; the call's own answer beside it.
struct Call {
  ex21::MatrixView m;
  uint32_t tileRows, tileCols;
  CUresult returned = CUDA_ERROR_UNKNOWN;
  CUtensorMap map{};
  Call(ex21::MatrixView view, uint32_t rows, uint32_t cols) : m(view), tileRows(rows), tileCols(cols) {
    recorded = Recorded{};
    returned = ex21::encodeTile(&recordingEncode, &map, m, tileRows, tileCols);
  }
};

void expectArguments(const Call& c) {
  const Recorded& r = recorded;
  CHECK(r.calls == 1);
  CHECK(r.map == &c.map);
  CHECK(r.type == c.m.type);
  CHECK(r.rank == 2);
  CHECK(r.address == reinterpret_cast<void*>(c.m.base));
  CHECK(r.dims == std::vector<cuuint64_t>{c.m.cols, c.m.rows});
  CHECK(r.strides == std::vector<cuuint64_t>{c.m.rowPitchBytes});
  CHECK(r.box == std::vector<cuuint32_t>{c.tileCols, c.tileRows});
  CHECK(r.elementStrides == std::vector<cuuint32_t>{1, 1});
  CHECK(r.interleave == CU_TENSOR_MAP_INTERLEAVE_NONE);
  CHECK(r.swizzle == CU_TENSOR_MAP_SWIZZLE_NONE);
  CHECK(r.l2 == CU_TENSOR_MAP_L2_PROMOTION_NONE);
  CHECK(r.fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  CHECK(c.returned == r.answer);
}

// ---- Exercise 3 ----------------------------------------------------------------------------------

using P = ex21::TileProblem;

const char* nameOf(P p) {
  static const char* names[] = {"None", "AddressAlignment", "DimensionRange", "PitchMultipleOf16", "PitchTooLarge",
                                "BoxRange", "BoxInnerBytes", "SwizzleSpan", "NanFillNotFloat"};
  return names[static_cast<int>(p)];
}

// A valid request (FLOAT32, 300 x 200, 832-byte rows, a 4 x 8 tile) with one change.
struct Asked {
  const char* what;
  void (*change)(ex21::TileRequest&);
  P expected;
};

// Each type the task lists, with the element size and the kind the reference gives it.
struct TypeOf {
  const char* name;
  CUtensorMapDataType type;
  uint64_t size;
  bool floatingPoint;
};
const TypeOf kTypes[] = {
    {"UINT8", CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, false},
    {"UINT16", CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, false},
    {"FLOAT16", CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, true},
    {"BFLOAT16", CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, true},
    {"UINT32", CU_TENSOR_MAP_DATA_TYPE_UINT32, 4, false},
    {"INT32", CU_TENSOR_MAP_DATA_TYPE_INT32, 4, false},
    {"FLOAT32", CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, true},
    {"FLOAT32_FTZ", CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ, 4, true},
    {"TFLOAT32", CU_TENSOR_MAP_DATA_TYPE_TFLOAT32, 4, true},
    {"TFLOAT32_FTZ", CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ, 4, true},
    {"UINT64", CU_TENSOR_MAP_DATA_TYPE_UINT64, 8, false},
    {"INT64", CU_TENSOR_MAP_DATA_TYPE_INT64, 8, false},
    {"FLOAT64", CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 8, true},
};

ex21::TileRequest validRequest() {
  ex21::TileRequest r;
  r.matrix.base = 0x7f0000200000ull;
  r.matrix.rows = 300, r.matrix.cols = 200, r.matrix.rowPitchBytes = 832;
  r.matrix.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  r.tileRows = 4, r.tileCols = 8;
  return r;
}

// Asks tileProblem about each request and compares each answer with the expected one.
void expectAnswers(std::initializer_list<Asked> cases) {
  for (const Asked& a : cases) {
    ex21::TileRequest r = validRequest();
    a.change(r);
    const P answer = ex21::tileProblem(r);
    INFO(std::string(a.what) << ": expected " << std::string(nameOf(a.expected)) << ", answered "
         << std::string(nameOf(answer)));
    CHECK(answer == a.expected);
  }
}

}  // namespace

EXERCISE("find-encoder", "cuTensorMapEncodeTiled from a driver opened at run time",
         "dlopen the path you are given, ask cuDriverGetVersion (stub? older than 12.0?), then cuGetProcAddress_v2 "
         "at 12000 and check its CUresult, status and pointer; on failure dlclose and throw naming the path") {
  TEST_CASE("R1 R2 R4 R5 R7 R8: a CUDA 12.4 driver: the encoder its cuGetProcAddress gives at 12000, from that library, left open, none of its symbols global") {
    expectFound("driver 12040");
  }

  TEST_CASE("R4 R8: a CUDA 12.0 driver has tensor maps: its encoder, from that library, left open") {
    expectFound("driver 12000");
  }

  TEST_CASE("R4 R9: the toolkit's stub: a throw naming the path and the stub, the library closed") {
    expectRefused("stub", "stub");
  }

  TEST_CASE("R4 R9: a CUDA 11.8 driver: a throw naming the path and 12.0, the library closed") {
    expectRefused("driver 11080", "12.0");
  }

  TEST_CASE("R4 R9: a driver whose cuDriverGetVersion fails (not as the stub): a throw naming the path and 12.0, the library closed") {
    expectRefused("driver 12040 failing", "12.0");
  }

  TEST_CASE("R6 R9: a 13.0 driver whose cuGetProcAddress has no cuTensorMapEncodeTiled (CUDA_SUCCESS, no pointer): a throw, the library closed") {
    expectRefused("driver 13000 without", nullptr);
  }

  TEST_CASE("R9: no file at the path, and a file that is no library: a throw naming the path") {
    wb::ScratchDir dir;
    const std::string missing = dir.path() + "/nothing/libcuda.so.1", text = dir.path() + "/libcuda.so.1";
    std::ofstream(text) << "not a library\n";
    for (const std::string& path : {missing, text}) {
      const Found f = find(path);
      CAPTURE(path);
      CHECK(f.threw);
      CHECK(f.message.find(path) != std::string::npos);
    }
  }

  TEST_CASE("R5 R8: the machine's own libcuda.so.1: the function the linked driver's cuGetProcAddress gives at 12000") {
    wbt::initDriver();
    void* expected = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CU_CHECK(cuGetProcAddress("cuTensorMapEncodeTiled", &expected, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status));
    REQUIRE(expected != nullptr);
    const Found f = find("libcuda.so.1");
    CAPTURE(f.message);
    CHECK(reinterpret_cast<void*>(f.fn) == expected);
  }
}

EXERCISE("encode-tile", "A tensor map for a tile of a row-major matrix",
         "one call of encode: dims and box innermost first ({cols, rows}), one stride in bytes (the row pitch), "
         "element strides 1, no interleave, no swizzle, no L2 promotion, zero fill; return its answer") {
  TEST_CASE("R1 R2 R3 R4 R5: FLOAT32, FLOAT16 and UINT8 matrices: one call with every argument as the task says, its answer returned, nothing held") {
    Ctx ctx;
    wbt::DeviceBuffer memory(300 * 1008);  // room for each matrix below
    const wbx::Holdings before = wbx::holdings();
    const ex21::MatrixView views[] = {
        {memory.get(), 300, 200, 832, CU_TENSOR_MAP_DATA_TYPE_FLOAT32},
        {memory.get(), 64, 100, 224, CU_TENSOR_MAP_DATA_TYPE_FLOAT16},
        {memory.get(), 10, 1000, 1008, CU_TENSOR_MAP_DATA_TYPE_UINT8},
    };
    const uint32_t tiles[][2] = {{4, 8}, {16, 32}, {8, 64}};
    for (int i = 0; i < 3; ++i) {
      CAPTURE(i);
      const Call c(views[i], tiles[i][0], tiles[i][1]);
      expectArguments(c);
      CHECK(c.returned == CUDA_SUCCESS);
    }
    CHECK(wbx::holdings().differenceFrom(before) == "");
  }

  TEST_CASE("R1 R2 R4 R5: rows 804 bytes apart: encode called as for any matrix, the driver's refusal returned, nothing held") {
    Ctx ctx;
    wbt::DeviceBuffer memory(300 * 804);
    const wbx::Holdings before = wbx::holdings();
    const Call c({memory.get(), 300, 200, 804, CU_TENSOR_MAP_DATA_TYPE_FLOAT32}, 4, 8);
    expectArguments(c);  // a refusal of encodeTile's own would not have called encode
    CHECK(c.returned != CUDA_SUCCESS);
    CHECK(wbx::holdings().differenceFrom(before) == "");
  }

  TEST_CASE("R2 R3: the map loads the 8 x 4 box at column 196, row 298 through a TMA kernel: the matrix's values, zeros outside") {
    Ctx ctx;
    const uint64_t pitch = 208;  // floats
    wbt::DeviceBuffer memory(300 * pitch * 4), out(8 * 4 * 4);
    std::vector<float> host(300 * pitch, -1.0f);
    for (uint64_t r = 0; r < 300; ++r)
      for (uint64_t c = 0; c < 200; ++c) host[r * pitch + c] = 1000.0f * r + c;
    CU_CHECK(cuMemcpyHtoD(memory.get(), host.data(), host.size() * 4));
    const Call c({memory.get(), 300, 200, pitch * 4, CU_TENSOR_MAP_DATA_TYPE_FLOAT32}, 4, 8);
    REQUIRE(c.returned == CUDA_SUCCESS);
    CUlibrary library = nullptr;
    const std::vector<char> image = wb::readVerifiedImage("tensor_maps.fatbin");
    CU_CHECK(cuLibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    const CUfunction loadBox = wbt::functionOf(library, "tma_load_box");
    int x = 196, y = 298, boxCols = 8, boxRows = 4;
    CUdeviceptr o = out.get();
    void* args[] = {const_cast<CUtensorMap*>(&c.map), &x, &y, &boxCols, &boxRows, &o};
    CU_CHECK(cuLaunchKernel(loadBox, 1, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr));
    std::vector<float> box(32);
    CU_CHECK(cuMemcpyDtoH(box.data(), out.get(), box.size() * 4));
    CU_CHECK(cuLibraryUnload(library));
    for (int i = 0; i < 32; ++i) {
      const int col = x + i % 8, row = y + i / 8;
      CAPTURE(i);
      CHECK(box[i] == (col < 200 && row < 300 ? 1000.0f * row + col : 0.0f));
    }
  }
}

EXERCISE("tile-rules", "The rule a tile request breaks, before the driver says so",
         "check in the task's order: 16-byte base, 1..2^32 rows and cols, a pitch in BYTES that is a multiple of 16 "
         "and below 2^40, 1..256 tile rows and cols, tileCols x element size a multiple of 16 and within the "
         "swizzle's span, the NaN fill only for floating-point types") {
  TEST_CASE("R1 R5 R8: a base that is no multiple of 16 is AddressAlignment; base + 16 and the valid request (its 16-byte multiple of inner bytes among them) are None") {
    expectAnswers({
        {"the valid request", [](ex21::TileRequest&) {}, P::None},
        {"base + 8", [](ex21::TileRequest& r) { r.matrix.base += 8; }, P::AddressAlignment},
        {"base + 16", [](ex21::TileRequest& r) { r.matrix.base += 16; }, P::None},
    });
  }

  TEST_CASE("R2: 0 rows or columns, and more than 2^32 of either, are DimensionRange; 2^32 is allowed") {
    expectAnswers({
        {"0 rows", [](ex21::TileRequest& r) { r.matrix.rows = 0; }, P::DimensionRange},
        {"0 columns", [](ex21::TileRequest& r) { r.matrix.cols = 0; }, P::DimensionRange},
        {"2^32 rows", [](ex21::TileRequest& r) { r.matrix.rows = 1ull << 32; }, P::None},
        {"2^32 columns", [](ex21::TileRequest& r) { r.matrix.cols = 1ull << 32; }, P::None},
        {"2^32 + 1 columns", [](ex21::TileRequest& r) { r.matrix.cols = (1ull << 32) + 1; }, P::DimensionRange},
        {"2^32 + 1 rows", [](ex21::TileRequest& r) { r.matrix.rows = (1ull << 32) + 1; }, P::DimensionRange},
    });
  }

  TEST_CASE("R3: a pitch in bytes that is no multiple of 16 is PitchMultipleOf16, one of 2^40 or more PitchTooLarge") {
    expectAnswers({
        {"a pitch of 804 bytes", [](ex21::TileRequest& r) { r.matrix.rowPitchBytes = 804; }, P::PitchMultipleOf16},
        {"a pitch of 816 bytes (204 floats)", [](ex21::TileRequest& r) { r.matrix.rowPitchBytes = 816; }, P::None},
        {"a pitch of 2^40", [](ex21::TileRequest& r) { r.matrix.rowPitchBytes = 1ull << 40; }, P::PitchTooLarge},
        {"a pitch of 2^40 - 16", [](ex21::TileRequest& r) { r.matrix.rowPitchBytes = (1ull << 40) - 16; }, P::None},
    });
  }

  TEST_CASE("R4: 0 tile rows or columns, and more than 256, are BoxRange; 256 is allowed") {
    expectAnswers({
        {"0 tile rows", [](ex21::TileRequest& r) { r.tileRows = 0; }, P::BoxRange},
        {"256 tile rows", [](ex21::TileRequest& r) { r.tileRows = 256; }, P::None},
        {"257 tile rows", [](ex21::TileRequest& r) { r.tileRows = 257; }, P::BoxRange},
        {"0 tile columns", [](ex21::TileRequest& r) { r.tileCols = 0; }, P::BoxRange},
        {"256 tile columns (1024 bytes)", [](ex21::TileRequest& r) { r.tileCols = 256; }, P::None},
    });
  }

  TEST_CASE("R5: a box whose inner bytes are no multiple of 16 is BoxInnerBytes") {
    expectAnswers({
        {"6 float columns (24 bytes)", [](ex21::TileRequest& r) { r.tileCols = 6; }, P::BoxInnerBytes},
        {"4 float columns (16 bytes)", [](ex21::TileRequest& r) { r.tileCols = 4; }, P::None},
        {"FLOAT16, 8 columns (16 bytes)",
         [](ex21::TileRequest& r) { r.matrix.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16, r.tileCols = 8; }, P::None},
        {"FLOAT16, 4 columns (8 bytes)",
         [](ex21::TileRequest& r) { r.matrix.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16, r.tileCols = 4; }, P::BoxInnerBytes},
        {"BFLOAT16, 12 columns (24 bytes)",
         [](ex21::TileRequest& r) { r.matrix.type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, r.tileCols = 12; }, P::BoxInnerBytes},
        {"UINT8, 16 columns", [](ex21::TileRequest& r) { r.matrix.type = CU_TENSOR_MAP_DATA_TYPE_UINT8, r.tileCols = 16; },
         P::None},
        {"UINT8, 8 columns", [](ex21::TileRequest& r) { r.matrix.type = CU_TENSOR_MAP_DATA_TYPE_UINT8, r.tileCols = 8; },
         P::BoxInnerBytes},
        {"UINT16, 8 columns", [](ex21::TileRequest& r) { r.matrix.type = CU_TENSOR_MAP_DATA_TYPE_UINT16, r.tileCols = 8; },
         P::None},
        {"FLOAT64, 2 columns", [](ex21::TileRequest& r) { r.matrix.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT64, r.tileCols = 2; },
         P::None},
        {"INT64, 3 columns (24 bytes)",
         [](ex21::TileRequest& r) { r.matrix.type = CU_TENSOR_MAP_DATA_TYPE_INT64, r.tileCols = 3; }, P::BoxInnerBytes},
        {"TFLOAT32, 6 columns", [](ex21::TileRequest& r) { r.matrix.type = CU_TENSOR_MAP_DATA_TYPE_TFLOAT32, r.tileCols = 6; },
         P::BoxInnerBytes},
    });
  }

  TEST_CASE("R5: every type with its element size: a 16-byte inner box is allowed, one of 16 bytes and one element is BoxInnerBytes") {
    for (const TypeOf& t : kTypes) {
      ex21::TileRequest r = validRequest();
      r.matrix.type = t.type;
      r.tileCols = static_cast<uint32_t>(16 / t.size);
      const P sixteen = ex21::tileProblem(r);
      r.tileCols += 1;  // 16 + size bytes: a multiple of 16 for no size here
      const P more = ex21::tileProblem(r);
      INFO(std::string(t.name) << ": 16 bytes answered " << std::string(nameOf(sixteen))
         << ", 16 bytes and one element answered " << std::string(nameOf(more)));
      CHECK(sixteen == P::None);
      CHECK(more == P::BoxInnerBytes);
    }
  }

  TEST_CASE("R6: a swizzled box wider than the swizzle's span is SwizzleSpan; as wide is allowed, and no swizzle has no span") {
    expectAnswers({
        {"SWIZZLE_128B, 32 floats (128 bytes)",
         [](ex21::TileRequest& r) { r.swizzle = CU_TENSOR_MAP_SWIZZLE_128B, r.tileCols = 32; }, P::None},
        {"SWIZZLE_128B, 36 floats (144 bytes)",
         [](ex21::TileRequest& r) { r.swizzle = CU_TENSOR_MAP_SWIZZLE_128B, r.tileCols = 36; }, P::SwizzleSpan},
        {"SWIZZLE_64B, 16 floats (64 bytes)",
         [](ex21::TileRequest& r) { r.swizzle = CU_TENSOR_MAP_SWIZZLE_64B, r.tileCols = 16; }, P::None},
        {"SWIZZLE_64B, 32 floats (128 bytes)",
         [](ex21::TileRequest& r) { r.swizzle = CU_TENSOR_MAP_SWIZZLE_64B, r.tileCols = 32; }, P::SwizzleSpan},
        {"SWIZZLE_32B, 8 floats (32 bytes)",
         [](ex21::TileRequest& r) { r.swizzle = CU_TENSOR_MAP_SWIZZLE_32B, r.tileCols = 8; }, P::None},
        {"SWIZZLE_32B, 12 floats (48 bytes)",
         [](ex21::TileRequest& r) { r.swizzle = CU_TENSOR_MAP_SWIZZLE_32B, r.tileCols = 12; }, P::SwizzleSpan},
        {"SWIZZLE_32B, FLOAT16, 16 columns (32 bytes)",
         [](ex21::TileRequest& r) {
           r.swizzle = CU_TENSOR_MAP_SWIZZLE_32B, r.matrix.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16, r.tileCols = 16;
         },
         P::None},
        {"SWIZZLE_NONE, 64 floats (256 bytes)", [](ex21::TileRequest& r) { r.tileCols = 64; }, P::None},
    });
  }

  TEST_CASE("R7: the NaN fill is NanFillNotFloat for a type that is not floating-point") {
    expectAnswers({
        {"NaN fill, FLOAT32", [](ex21::TileRequest& r) { r.fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA; },
         P::None},
        {"NaN fill, BFLOAT16",
         [](ex21::TileRequest& r) {
           r.fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA, r.matrix.type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
           r.tileCols = 8;
         },
         P::None},
        {"NaN fill, FLOAT32_FTZ",
         [](ex21::TileRequest& r) {
           r.fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA, r.matrix.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ;
         },
         P::None},
        {"NaN fill, INT32",
         [](ex21::TileRequest& r) {
           r.fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA, r.matrix.type = CU_TENSOR_MAP_DATA_TYPE_INT32;
         },
         P::NanFillNotFloat},
        {"NaN fill, UINT8, 16 columns",
         [](ex21::TileRequest& r) {
           r.fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA, r.matrix.type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
           r.tileCols = 16;
         },
         P::NanFillNotFloat},
    });
  }

  TEST_CASE("R7: every type: the NaN fill, with a 16-byte inner box, is allowed for the floating-point types only") {
    for (const TypeOf& t : kTypes) {
      ex21::TileRequest r = validRequest();
      r.matrix.type = t.type;
      r.tileCols = static_cast<uint32_t>(16 / t.size);
      r.fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
      const P answer = ex21::tileProblem(r);
      INFO(std::string(t.name) << ": answered " << std::string(nameOf(answer)));
      CHECK(answer == (t.floatingPoint ? P::None : P::NanFillNotFloat));
    }
  }

  TEST_CASE("R8: requests that break two rules: the first rule broken, in the task's order") {
    expectAnswers({
        {"base + 8 and a pitch of 804", [](ex21::TileRequest& r) { r.matrix.base += 8, r.matrix.rowPitchBytes = 804; },
         P::AddressAlignment},
        {"257 tile columns (1028 bytes, no multiple of 16)", [](ex21::TileRequest& r) { r.tileCols = 257; }, P::BoxRange},
        {"NaN fill, INT32, 6 columns", [](ex21::TileRequest& r) {
           r.fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA, r.matrix.type = CU_TENSOR_MAP_DATA_TYPE_INT32;
           r.tileCols = 6;
         },
         P::BoxInnerBytes},
        {"0 rows and base + 8", [](ex21::TileRequest& r) { r.matrix.rows = 0, r.matrix.base += 8; }, P::AddressAlignment},
        {"0 columns and a pitch of 804", [](ex21::TileRequest& r) { r.matrix.cols = 0, r.matrix.rowPitchBytes = 804; },
         P::DimensionRange},
        {"a pitch of 2^40 + 4 (no multiple of 16, and too large)",
         [](ex21::TileRequest& r) { r.matrix.rowPitchBytes = (1ull << 40) + 4; }, P::PitchMultipleOf16},
        {"a pitch of 2^40 and 0 tile rows", [](ex21::TileRequest& r) { r.matrix.rowPitchBytes = 1ull << 40, r.tileRows = 0; },
         P::PitchTooLarge},
        {"SWIZZLE_32B, INT32, 12 columns (48 bytes), NaN fill",
         [](ex21::TileRequest& r) {
           r.swizzle = CU_TENSOR_MAP_SWIZZLE_32B, r.matrix.type = CU_TENSOR_MAP_DATA_TYPE_INT32, r.tileCols = 12;
           r.fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
         },
         P::SwizzleSpan},
    });
  }
}
