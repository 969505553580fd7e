// The ledger: what the code under check holds, and a way to make one driver call fail.
//
// Every exercise check binary defines the Driver API entry points listed in ledger.cpp itself: a
// call from the learner's code (or the check's) reaches that definition first, which notes the
// call and what it made or gave back, then calls the driver's own entry point (found with
// dlsym(RTLD_NEXT)). So a check can ask, deterministically and without timing anything:
//   - what a function left behind: compare holdings() before and after it;
//   - whether it called something: calls("cuCtxSynchronize");
//   - what it does when a driver call in its middle fails: FailCall makes the nth call of one entry
//     point return an error without reaching the driver.
// A handle goes off the books when it is given back, or when the context it was made in is
// destroyed (cuCtxDestroy gives back what the context held). What a library made through
// cuGetProcAddress or the runtime's own driver calls is not seen: the ledger sees direct calls.
//
// A check file may stand between the code and further entry points of its own with WBX_INTERPOSE
// (each entry point once per binary: not one that ledger.cpp already defines).
#pragma once

#include <cuda.h>

#include <array>
#include <string>

namespace wbx {

// What can be held, counted per kind.
enum class Held : int {
  Contexts,        // cuCtxCreate
  PrimaryRetains,  // cuDevicePrimaryCtxRetain (one per retain, given back by cuDevicePrimaryCtxRelease)
  Streams,
  Events,
  DeviceMemory,    // cuMemAlloc, cuMemAllocPitch, cuMemAllocAsync, cuMemAllocFromPoolAsync
  PinnedHost,      // cuMemAllocHost, cuMemHostAlloc
  HostRegistered,  // cuMemHostRegister
  Modules,
  Libraries,
  Graphs,          // cuGraphCreate, cuStreamEndCapture, cuGraphClone
  GraphExecs,
  LinkStates,      // cuLinkCreate
  IpcMappings,     // cuIpcOpenMemHandle
  MemHandles,      // cuMemCreate, cuMemImportFromShareableHandle, cuMemRetainAllocationHandle
  Reservations,    // cuMemAddressReserve
  Mappings,        // cuMemMap
  Pools,           // cuMemPoolCreate
  GreenContexts,   // cuGreenCtxCreate (CUDA 12.4+)
  Kinds
};

struct Holdings {
  std::array<long, static_cast<int>(Held::Kinds)> count{};
  long operator[](Held kind) const { return count[static_cast<int>(kind)]; }
  // What this holds beyond before, and what it lacks of it: "1 event more, 1 stream fewer";
  // empty when the two are the same.
  std::string differenceFrom(const Holdings& before) const;
};

// What the process holds now, by the ledger's count.
Holdings holdings();

// How often the process has called an entry point the ledger stands before, by the name the source
// calls it ("cuCtxSynchronize", "cuMemAlloc": not the versioned symbol).
long calls(const std::string& function);

// While it lives, the nth call from now of function (by its source name) returns error without
// reaching the driver; the calls before and after it reach the driver as usual.
class FailCall {
 public:
  FailCall(const std::string& function, CUresult error, unsigned nth = 1);
  ~FailCall();
  FailCall(const FailCall&) = delete;
  FailCall& operator=(const FailCall&) = delete;
  bool fired() const;  // whether the failure was handed out
};

namespace detail {
void* real(const char* symbol);        // the driver's own entry point
CUresult enter(const char* function);  // counts the call; an injected error, or CUDA_SUCCESS
}  // namespace detail

}  // namespace wbx

#define WBX_STRING2(x) #x
#define WBX_STRING(x) WBX_STRING2(x)
// Defines the entry point `name` (as the source calls it; cuda.h's macro picks the versioned
// symbol) as a call the ledger counts and FailCall can fail. params and args are parenthesised.
#define WBX_INTERPOSE(name, params, args)                                                        \
  extern "C" CUresult CUDAAPI name params {                                                      \
    using Real = CUresult(CUDAAPI*) params;                                                      \
    static const Real real = reinterpret_cast<Real>(::wbx::detail::real(WBX_STRING(name)));     \
    if (const CUresult injected = ::wbx::detail::enter(#name)) return injected;                  \
    return real ? real args : CUDA_ERROR_NOT_FOUND;                                              \
  }
