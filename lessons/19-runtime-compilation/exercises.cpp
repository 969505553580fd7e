// Lesson 19's exercises. Replace each body with your solution, then run ctest -R exercise19.
// NVRTC's header is nvrtc.h; the program, its checks and these exercises link it (CUDA::nvrtc).

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "exercises.hpp"
#include "exercise.hpp"

#include <nvrtc.h>

namespace ex19 {

// Exercise 1 of 3 (compile-or-log): A compile that hands back its log on failure and a loaded library on success
//
// Task: A service compiles kernels its users write. When a source does not compile, the user must
// see NVRTC's log, which names the line; when it does, the service needs it loaded. Write
// compileAndLoad: compile source with NVRTC for dev's own architecture (--gpu-architecture=sm_XY
// from its compute capability), giving the program `name` (the log names it). If the compile fails
// with NVRTC_ERROR_COMPILATION, return the log and no library, without throwing; on success, load
// the cubin with cuLibraryLoadData and return the library and the log (which may hold warnings). Any
// other failure throws. The nvrtcProgram is destroyed on every path.
//
// The check: exercise19.compile-or-log calls compileAndLoad on a source with an undefined name on
// line 3 and verifies that it returned without throwing, with no library and a log naming
// "broken.cu(3)". Then on a good source that also warns: a library whose kernel, launched, computes
// right, and a log holding the warning. The check unloads the library.
//
// Learn it in: lesson 19, step 4 ("The compile log"), and step 2 ("Compile to a cubin, load it, launch it")
Built compileAndLoad(const std::string& source, const std::string& name, CUdevice dev) {
  wb::notDone();
}

// Exercise 2 of 3 (template-instances): Template kernels instantiated and found by name expression
//
// Task: A library ships one templated kernel source and instantiates it at run time for the types
// and constants a model needs, such as ops::scale<float, 2>. Nobody should write a mangled name by
// hand. Write instantiate: compile source for dev's architecture with one name expression per entry
// of nameExpressions (nvrtcAddNameExpression, before the compile), load the cubin, and for each
// expression look its instance up by the lowered name nvrtcGetLoweredName gives (copy it: NVRTC
// frees it with the program). Return the library, the kernels and the lowered names in the order of
// nameExpressions.
//
// The check: exercise19.template-instances instantiates ops::scale<float, 2> and ops::scale<double,
// 3>, a template in a namespace with a type and a constant parameter, and verifies that the lowered
// names are those NVRTC gives the same expressions in a compile of its own, and that each kernel,
// launched, computes x * Factor + 1 in its own type.
//
// Learn it in: lesson 19, step 5 ("Templates: name expressions, not guessed names")
Instances instantiate(const std::string& source, const std::vector<std::string>& nameExpressions, CUdevice dev) {
  wb::notDone();
}

// Exercise 3 of 3 (disk-cache): A disk cache of compiled kernels keyed by everything that changes the cubin
//
// Task: A server compiles the same kernels in every process it starts, and a compile costs far more
// than a load. Write cachedCompile: return the cubin for inputs from the folder dir when an entry
// made from exactly these inputs is there and intact; otherwise call compile(inputs), store what it
// returns in dir, and return it. The key is every field of CompileInputs: the source, the options,
// the compute capability, and the NVRTC and driver versions. A damaged entry (cut short, say) is a
// miss, never an error; an entry is never read half-written (write it elsewhere, then rename it).
//
// The check: exercise19.disk-cache calls cachedCompile in an empty folder with a compiler that counts
// its calls (NVRTC for the device), and verifies that the first call compiled and returned the
// compiler's cubin, and that the same inputs again returned the same bytes without compiling. Then
// that changing each field alone (the source, one option more, the compute capability, NVRTC's minor
// version, the driver version) compiled once more, and that the first inputs still hit afterwards.
// Last, with every file in the folder cut to half its size, that the first inputs compiled again
// and came back intact, and that the cubin loads and runs.
//
// Learn it in: lesson 19, step 8 ("A compile cache keyed by what invalidates it")
std::vector<char> cachedCompile(const std::string& dir, const CompileInputs& inputs, const Compiler& compile) {
  wb::notDone();
}

}  // namespace ex19
