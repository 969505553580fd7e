// What lesson 00 asks of a machine before any other lesson runs there, in pieces a deployment can
// reuse in its own start-up checks: the driver files on the loader's path and which are the
// toolkit's stub, what a program imports from the driver, the versions that must agree, the CUDA
// environment variables in effect, where the JIT cache is, and where MPS would be. Needs the CUDA
// headers for the types, and no CUDA library: everything that asks the driver goes through a
// wb::LoadedDriver (loaded_driver.hpp), so a program built on this starts without one.
#pragma once

#include "environment.hpp"
#include "loaded_driver.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace wb {

// ---- Findings: what a survey of the machine says, for people and for tools ----------------------

enum class Severity {
  Ok,        // as it should be
  Note,      // worth knowing: something set or missing that changes what programs see here
  Action,    // will go wrong for CUDA programs here: the finding says what to do
  NoDriver,  // no usable driver or device: no CUDA program runs here
};
// What a finding rests on: NVIDIA's documentation, what one driver was seen to do, or a figure this
// program computed from documented facts and what it read on this machine.
enum class Basis { Documented, Observed, Computed };

struct Finding {
  std::string id;      // stable and unique, "driver.stub-on-path", "env.CUDA_LAUNCH_BLOCKING"
  int step = 0;        // the step of lesson 00 that reports it
  Severity severity = Severity::Ok;
  Basis basis = Basis::Documented;
  std::string what;    // what this machine has, in one line
  std::string detail;  // why it matters (may be empty)
  std::string todo;    // what to do (Action and NoDriver)
  std::string lesson;  // the lesson that explains it, "12", or ""
};

const char* severityName(Severity s);  // "ok", "note", "action", "no-driver" (the JSON's words)
const char* basisName(Basis b);        // "documented", "observed", "computed"
// A JSON string literal: quotes, backslashes and control characters escaped.
std::string jsonString(const std::string& text);
// {"id": ..., "step": ..., "severity": ..., "basis": ..., "what": ..., "detail": ..., "todo": ..., "lesson": ...}
std::string toJson(const Finding& f);
// {"program": ..., "exitCode": ..., "findings": [one toJson a line]}, printed to stdout.
void printJson(const char* program, const std::vector<Finding>& findings, int exitCode);
// A finding from its fields; the report that adds it sets its step.
Finding finding(std::string id, Severity s, Basis b, std::string what, std::string lesson = "",
                std::string detail = "", std::string todo = "");
// A path as people write it: under $HOME as "~/...".
std::string shownPath(const std::string& path);
// The items, one after the other, with `by` between them.
std::string join(const std::vector<std::string>& items, const char* by = ", ");

// ---- The program's own binary (the ELF reader lesson 12 steps 2 uses) ---------------------------

struct DynamicSection {
  bool read = false;                  // false: not a 64-bit ELF file that could be read
  std::vector<std::string> needed;    // DT_NEEDED: the libraries the loader must find before main
  std::vector<std::string> imported;  // undefined dynamic symbols: what those libraries must define
  bool bindNow = false;               // -z now (DT_FLAGS BIND_NOW or DT_FLAGS_1 NOW)
};
DynamicSection readDynamicSection(const std::string& path);

// ---- The driver files the loader can find -----------------------------------------------------

// One libcuda file the loader could open, in the order it searches (man ld.so): the folders of
// LD_LIBRARY_PATH, then the ld.so cache (ldconfig -p).
struct DriverFile {
  std::string path;     // as the search finds it, ".../libcuda.so.1"
  std::string real;     // with links resolved
  std::string foundBy;  // "LD_LIBRARY_PATH" or "the ld.so cache"
};
// libcuda.so.1 (what programs linked to the driver, and dlopen of that name, ask for) and
// libcuda.so (what some programs dlopen, and what the toolkit's stubs/ folder holds).
std::vector<DriverFile> driverFilesOnLoaderPath();

// What a libcuda file is, asked of its cuDriverGetVersion (which needs no cuInit) in a forked child
// process that opens nothing else of CUDA, so the file is never loaded into this process. Call it
// before this process initialises CUDA (lesson 17: a process forked after cuInit has no usable CUDA;
// this child uses only the file it opens).
struct DriverFileKind {
  enum Kind { Driver, Stub, NotADriver, Unreadable } kind = Unreadable;
  int version = 0;  // cuDriverGetVersion's answer, for a Driver
  std::string why;  // for NotADriver and Unreadable
};
DriverFileKind inspectDriverFile(const std::string& path);

// The NVIDIA kernel module's version ("580.159.04", from /proc/driver/nvidia/version), or "".
std::string kernelModuleVersion();
// The version a user-mode driver's file name carries ("580.159.04" from libcuda.so.580.159.04), or "".
std::string versionInFileName(const std::string& path);

// ---- Versions ------------------------------------------------------------------------------------

// "12.8" for 12080 (the encoding of CUDA_VERSION and cuDriverGetVersion: 1000 major + 10 minor).
std::string cudaVersionText(int version);
// The PTX ISA version a CUDA release introduced (the PTX ISA's release history: 8.0 for 12.0 ... 8.5
// for 12.5 and 12.6, 8.6 for 12.7, 8.7 for 12.8, 8.8 for 12.9, 9.0 for 13.0, 9.1 for 13.1), which is
// the newest its driver's JIT compiles; "" before 12.0 or after the newest this table knows.
std::string ptxIsaOf(int cudaVersion);
// The .version directive of PTX text ("9.0"), or "".
std::string ptxVersionOfText(const std::string& ptx);
// Compares two "major.minor" versions: <0, 0, >0.
int compareVersions(const std::string& a, const std::string& b);
// The oldest driver branch on which programs built with a toolkit of this CUDA major version run
// under minor version compatibility (NVIDIA's CUDA compatibility guide: 450 for 11.x, 525 for 12.x,
// 580 for 13.x); 0 for a major version the table lacks.
int minorVersionFloor(int cudaMajor);

// What cuInit's answer says about this process.
enum class InitAnswer {
  Ready,           // CUDA_SUCCESS
  Stub,            // CUDA_ERROR_STUB_LIBRARY: the toolkit's stub, not a driver
  NoDevice,        // CUDA_ERROR_NO_DEVICE: none, or none that CUDA_VISIBLE_DEVICES lets through
  ForkedAfterInit, // CUDA_ERROR_NOT_INITIALIZED: what driver 580 answered in a child forked after its parent's cuInit (lesson 17)
  DriverMismatch,  // CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (lesson 12)
  Failed,          // anything else
};
InitAnswer classifyInit(CUresult answer);

// What a process can know of a fork itself, whatever the driver answers: rememberInit() after a
// cuInit that succeeded records this process's id; in a child forked since, initialisedIn() names
// the process that initialised CUDA (and 0 in that process itself, or where nothing was recorded).
void rememberInit();
int initialisedIn();
// fork(): the parent waits for the child and exits with its exit code (128 + the signal that
// ended it); the child returns, with a 60 s alarm, so that a forked child that hangs is ended.
// Throws std::runtime_error where fork fails.
void forkAndGoOnInChild();

// The PTX ISA of the course's kernel images: the .version directive of the PTX the build made, read
// through the course's image reader; "" where the image is missing or damaged (lesson 06).
std::string imagesPtxIsa();

// "DEFAULT", "PROHIBITED", "EXCLUSIVE_PROCESS" (CU_DEVICE_ATTRIBUTE_COMPUTE_MODE), or "unknown".
const char* computeModeName(int mode);

// ---- The CUDA environment variables -------------------------------------------------------------

struct ActiveVariable {
  const EnvVariable* variable;  // its row of common/environment.cpp's table (what NVIDIA documents)
  std::string value;            // as set ("(empty)" for an empty value)
  const char* lesson;           // the lesson that shows what it changes, or ""
};
// Every variable of the table set to something other than its documented default, in table order.
std::vector<ActiveVariable> activeCudaVariables();
// The lesson that shows what a variable of the table changes ("09" for CUDA_LAUNCH_BLOCKING), or "".
const char* lessonAbout(const std::string& variable);

// ---- The JIT cache ------------------------------------------------------------------------------

// Where the driver keeps what its JIT compiled, as the programming guide documents the variables:
// CUDA_CACHE_PATH names the folder (default ~/.nv/ComputeCache), CUDA_CACHE_MAXSIZE its size in
// bytes (default 1 GiB, as common/environment.cpp's table has it), CUDA_CACHE_DISABLE=1 turns it off.
struct JitCache {
  bool disabled = false;
  std::string folder;
  bool folderFromVariable = false;
  bool exists = false;
  // The folder, or where it does not exist yet the nearest folder above it (which the driver must
  // create it in), is a folder this process may write in.
  bool writable = false;
  std::string writableCheckedAt;  // the folder whose permission answered
  unsigned long long usedBytes = 0;
  std::size_t files = 0;
  unsigned long long maxBytes = 0;
  bool maxFromVariable = false;
};
JitCache jitCache();

// ---- MPS ----------------------------------------------------------------------------------------

// The folder where an MPS control daemon and its clients meet (NVIDIA's MPS documentation: named
// pipes and sockets in /tmp/nvidia-mps, or in CUDA_MPS_PIPE_DIRECTORY). At cuInit the driver tries
// to connect to a control daemon there; when it succeeds, the process is an MPS client.
struct MpsPipeFolder {
  std::string folder;
  bool fromVariable = false;
  bool exists = false;
  std::size_t entries = 0;  // what the folder holds (a daemon's pipes and sockets)
};
MpsPipeFolder mpsPipeFolder();

// ---- Pairs of devices (lesson 00, step 7) -------------------------------------------------------

// Every device's primary context, retained for step 7 and released at its end: retained once, so
// that each pair does not build the contexts again. A failed call throws CallFailed.
struct Primaries {
  const DriverApi& api;
  std::vector<CUdevice> devices;
  std::vector<CUcontext> contexts;
  Primaries(const LoadedDriver& d, const DriverApi& a, int count);
  ~Primaries();
  Primaries(const Primaries&) = delete;
  Primaries& operator=(const Primaries&) = delete;
};

// A round trip a -> b -> a of 4 MiB with cuMemcpyPeer, with peer access enabled both ways when
// `peer` (so the bytes go over the link between the devices): whether every byte came back as sent.
// Everything it takes is given back; a failed call throws CallFailed.
bool roundTrip(const LoadedDriver& d, const DriverApi& api, CUcontext a, CUcontext b, bool peer);

}  // namespace wb
