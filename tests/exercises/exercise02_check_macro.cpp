// The checks of lesson 02's exercises (lessons/02-check-macro/exercises.cpp). A failing call is a
// real one (an ordinal past the last device); pending work comes from lesson 09's gate kernel, so
// nothing sleeps and nothing waits past the gate's deadline. Each case's name begins with the
// requirements it verifies.
#include "check.hpp"
#include "gate.hpp"
#include "02-check-macro/exercises.hpp"

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace {

// The primary context of device 0, current, and the gate kernel loaded into it.
struct Lab {
  wbt::RetainedPrimary primary{(wbt::initDriver(), wbt::device(0))};
  wbt::Pushed current{primary.get()};
  CUlibrary library = nullptr;
  wb::StreamKernels k;
  Lab() {
    CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    k = wb::StreamKernels::load(library);
  }
  ~Lab() { cuLibraryUnload(library); }
  Lab(const Lab&) = delete;
  Lab& operator=(const Lab&) = delete;
};

using wbt::Stream;

// What CU_CHECK would have thrown for this call at this line of this file.
std::string checkedMessage(CUresult code, const char* call, int line) {
  return wb::DriverError(code, call, __FILE__, line).what();
}

}  // namespace

EXERCISE("check-allowing", "A checking macro that names the call and the line, and lets an expected code through",
         "if (rc == CUDA_SUCCESS || rc == allowed) return rc; otherwise throw wb::DriverError(rc, call, file, line) "
         "(or call wb::throwDriverError). Do not write CU_CHECK(rc) inside checkAllowing: its report would name "
         "\"rc\" and your line, not the caller's call and line.") {
  TEST_CASE("R1 R2: a call that succeeds gives CUDA_SUCCESS, and an allowed failure gives its own code back") {
    const int count = wbt::initDriver();
    int seen = 0;
    CUdevice dev = 0;
    const CUresult succeeded = EX02_CHECK_ALLOWING(cuDeviceGetCount(&seen), CUDA_ERROR_INVALID_DEVICE);
    const CUresult allowed = EX02_CHECK_ALLOWING(cuDeviceGet(&dev, count), CUDA_ERROR_INVALID_DEVICE);
    CHECK_MESSAGE(succeeded == CUDA_SUCCESS, "a call that succeeded must give CUDA_SUCCESS, not throw or change it");
    CHECK_MESSAGE(allowed == CUDA_ERROR_INVALID_DEVICE, "the allowed code must come back as it is: the caller tells it from success");
  }

  TEST_CASE("R1 R2: NOT_READY comes back while a stream is held, SUCCESS once it has run") {
    Lab lab;
    Stream s;
    CUresult whileHeld = CUDA_SUCCESS, afterwards = CUDA_ERROR_UNKNOWN;
    {
      wb::Gate gate(lab.k.gate, s.get());
      whileHeld = EX02_CHECK_ALLOWING(cuStreamQuery(s.get()), CUDA_ERROR_NOT_READY);
      const bool stillHeld = gate.outcome() == wb::Gate::Waiting;
      gate.open();
      CU_CHECK(cuStreamSynchronize(s.get()));
      afterwards = EX02_CHECK_ALLOWING(cuStreamQuery(s.get()), CUDA_ERROR_NOT_READY);
      REQUIRE_MESSAGE(stillHeld, "the gate kernel gave up before the query (a very busy GPU?)");
    }
    CHECK(whileHeld == CUDA_ERROR_NOT_READY);
    CHECK(afterwards == CUDA_SUCCESS);
  }

  TEST_CASE("R3 R4: any other code throws wb::DriverError naming the call, the caller's file and the caller's line") {
    const int count = wbt::initDriver();
    CUdevice dev = 0;
    bool threw = false;
    CUresult code = CUDA_SUCCESS;
    std::string expression, file, what;
    int line = 0;
    const int callLine = __LINE__ + 2;  // the line of the macro below
    try {
      EX02_CHECK_ALLOWING(cuDeviceGet(&dev, count), CUDA_ERROR_NOT_READY);
    } catch (const wb::DriverError& e) {  // only the course's error: anything else goes to the reporter
      threw = true, code = e.code(), expression = e.expression(), file = e.file(), what = e.what(), line = e.line();
    }
    REQUIRE_MESSAGE(threw, "CUDA_ERROR_INVALID_DEVICE was not allowed, so it must throw");
    CHECK(code == CUDA_ERROR_INVALID_DEVICE);
    CHECK(expression == "cuDeviceGet(&dev, count)");
    CHECK(file == __FILE__);
    CHECK(line == callLine);
    CHECK(what == checkedMessage(CUDA_ERROR_INVALID_DEVICE, "cuDeviceGet(&dev, count)", callLine));
  }

  TEST_CASE("R3: a code that other calls allow is thrown where it is not the one allowed: NOT_READY, with INVALID_DEVICE allowed") {
    wbt::initDriver();
    bool threw = false;
    CUresult code = CUDA_SUCCESS;
    // The code a poll loop allows, handed to a call that allows another: as cuStreamQuery would answer.
    try {
      ex02::checkAllowing(CUDA_ERROR_NOT_READY, CUDA_ERROR_INVALID_DEVICE, "cuStreamQuery(stream)", __FILE__, __LINE__);
    } catch (const wb::DriverError& e) {  // only the course's error: anything else goes to the reporter
      threw = true, code = e.code();
    }
    CHECK_MESSAGE(threw, "CUDA_ERROR_NOT_READY was not the allowed code here, so it must throw");
    CHECK(code == CUDA_ERROR_NOT_READY);
  }
}

EXERCISE("guarded-entry", "A C entry point that returns the failing call's CUresult instead of throwing",
         "try { body(); } then catch (const wb::DriverError& e) before catch (const std::bad_alloc&), catch (const "
         "std::exception&) and catch (...): the most specific first, or every driver error becomes "
         "CUDA_ERROR_UNKNOWN. Write the message with std::snprintf(message, capacity, \"%s\", text), which "
         "cuts, terminates, and writes nothing when capacity is 0.") {
  TEST_CASE("R2: a failing checked call in the body comes back as its own CUresult, with CU_CHECK's whole message") {
    const int count = wbt::initDriver();
    CUdevice dev = 0;
    int line = 0;
    char message[1024] = {};
    const CUresult rc = ex02::callGuarded(  // the lambda's two statements share a line: it is CU_CHECK's line
        [&] { line = __LINE__; CU_CHECK(cuDeviceGet(&dev, count)); }, message, sizeof message);
    const std::string got(message, strnlen(message, sizeof message));
    CHECK_MESSAGE(rc == CUDA_ERROR_INVALID_DEVICE, "the host must get the failing call's own code");
    CHECK(got == checkedMessage(CUDA_ERROR_INVALID_DEVICE, "cuDeviceGet(&dev, count)", line));
  }

  TEST_CASE("R2 R5: a message longer than the buffer is cut to capacity - 1 characters and a NUL, nothing written past it; one byte holds the NUL alone") {
    const int count = wbt::initDriver();
    CUdevice dev = 0;
    int line = 0;
    char buffer[64];
    std::memset(buffer, 'X', sizeof buffer);
    const size_t capacity = 16;  // the rest of buffer is a guard zone that must stay 'X'
    const CUresult rc = ex02::callGuarded(
        [&] { line = __LINE__; CU_CHECK(cuDeviceGet(&dev, count)); }, buffer, capacity);
    const bool terminated = std::memchr(buffer, '\0', capacity) != nullptr;
    bool guardIntact = true;
    for (size_t i = capacity; i < sizeof buffer; ++i) guardIntact = guardIntact && buffer[i] == 'X';
    CHECK(rc == CUDA_ERROR_INVALID_DEVICE);
    CHECK_MESSAGE(guardIntact, "something was written past capacity");
    REQUIRE_MESSAGE(terminated, "no NUL within capacity: a C caller would read past the buffer");
    const std::string whole = checkedMessage(CUDA_ERROR_INVALID_DEVICE, "cuDeviceGet(&dev, count)", line);
    CHECK(std::string(buffer) == whole.substr(0, capacity - 1));

    char one[4];
    std::memset(one, 'X', sizeof one);
    const CUresult cut = ex02::callGuarded([] { throw std::runtime_error("no room for any of this"); }, one, 1);
    CHECK(cut == CUDA_ERROR_UNKNOWN);
    CHECK_MESSAGE(one[0] == '\0', "capacity 1 has room for the NUL alone, and it must be there");
    CHECK_MESSAGE((one[1] == 'X' && one[2] == 'X' && one[3] == 'X'), "something was written past capacity 1");
  }

  TEST_CASE("R1 R3 R4 R5 R6: bad_alloc is OUT_OF_MEMORY, other exceptions UNKNOWN, success SUCCESS with an empty message; capacity 0 is left alone, after a failure and after a success") {
    wbt::initDriver();
    char message[256];
    std::memset(message, 'X', sizeof message);
    const CUresult outOfMemory = ex02::callGuarded([] { throw std::bad_alloc(); }, message, sizeof message);
    CHECK(outOfMemory == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(std::memchr(message, '\0', sizeof message) != nullptr);

    const CUresult other =
        ex02::callGuarded([] { throw std::runtime_error("the model file is truncated"); }, message, sizeof message);
    CHECK(other == CUDA_ERROR_UNKNOWN);
    CHECK(std::string(message, strnlen(message, sizeof message)) == "the model file is truncated");

    const CUresult notStd = ex02::callGuarded([] { throw 42; }, message, sizeof message);
    CHECK(notStd == CUDA_ERROR_UNKNOWN);
    CHECK(std::memchr(message, '\0', sizeof message) != nullptr);

    std::memset(message, 'X', sizeof message);
    bool ran = false;
    int count = 0;
    const CUresult fine =
        ex02::callGuarded([&] { CU_CHECK(cuDeviceGetCount(&count)); ran = true; }, message, sizeof message);
    CHECK(ran);
    CHECK(fine == CUDA_SUCCESS);
    CHECK_MESSAGE(message[0] == '\0', "success must leave an empty message, not what the buffer held");

    std::memset(message, 'X', sizeof message);
    const CUresult noBuffer = ex02::callGuarded([] { throw std::runtime_error("nowhere to write this"); }, message, 0);
    CHECK(noBuffer == CUDA_ERROR_UNKNOWN);
    CHECK_MESSAGE(message[0] == 'X', "capacity 0: nothing may be written");
    const CUresult nullBuffer =
        ex02::callGuarded([] { throw std::runtime_error("nowhere to write this"); }, nullptr, 0);
    CHECK(nullBuffer == CUDA_ERROR_UNKNOWN);

    // A success has an empty message to write: with capacity 0 there is no room for its NUL either.
    std::memset(message, 'X', sizeof message);
    const CUresult fineNoBuffer = ex02::callGuarded([] {}, message, 0);
    CHECK(fineNoBuffer == CUDA_SUCCESS);
    CHECK_MESSAGE(message[0] == 'X', "capacity 0 after a success: nothing may be written, not even the NUL");
    const CUresult fineNull = ex02::callGuarded([] {}, nullptr, 0);
    CHECK(fineNull == CUDA_SUCCESS);
  }
}
