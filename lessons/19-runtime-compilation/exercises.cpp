// Lesson 19's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-19
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
// compileAndLoad.
//
//   R1: It compiles source with NVRTC for dev's own architecture (--gpu-architecture=sm_XY from its
//       compute capability), giving the program `name` (the log names it).
//   R2: If nvrtcCompileProgram answers NVRTC_ERROR_COMPILATION, it returns the log and no library,
//       without throwing.
//   R3: On success it loads the cubin with cuLibraryLoadData and returns the library and the log
//       (which may hold warnings).
//   R4: The log is text: without the terminating NUL that nvrtcGetProgramLogSize counts.
//   R5: Any other failure, of NVRTC or of the load, throws.
//   R6: The nvrtcProgram is destroyed on every path, a throw's too, and nothing is left held but
//       the library returned.
//
// The check: exercise19.compile-or-log calls compileAndLoad on a source with an undefined name on
// line 3 and verifies that it returned without throwing, with no library and a log naming
// "broken.cu(3)" and holding no NUL character. Then on a good source that also warns: a library
// whose kernel, launched, computes right, and a log holding the warning. Then it makes
// nvrtcCompileProgram fail once with NVRTC_ERROR_OUT_OF_MEMORY, and cuLibraryLoadData once with
// CUDA_ERROR_OUT_OF_MEMORY, and verifies that compileAndLoad threw both times. After every call as
// many NVRTC programs exist as before (the check stands between the code and NVRTC and counts
// nvrtcCreateProgram and nvrtcDestroyProgram), and no library more than the one returned. Every
// source is new to this run (a variable with a unique name is appended), so that NVRTC's own cache
// (CUDA 12.9 and newer) never answers in place of a compile. The check unloads the library. The
// good source's kernel must have dev's compute capability as its binary version
// (CU_FUNC_ATTRIBUTE_BINARY_VERSION); that the architecture comes from dev and not from a constant
// equal to it cannot be told apart where every device has the same one.
//
// Learn it in: lesson 19, step 4 ("The compile log"), and step 2 ("Compile to a cubin, load it, launch it")
Built compileAndLoad(const std::string& source, const std::string& name, CUdevice dev) {
  wb::notDone();
}

// Exercise 2 of 3 (template-instances): Template kernels instantiated and found by name expression
//
// Task: A library ships one templated kernel source and instantiates it at run time for the types
// and constants a model needs, such as ops::scale<float, 2>. Nobody should write a mangled name by
// hand. Write instantiate.
//
//   R1: It compiles source for dev's architecture with one name expression per entry of
//       nameExpressions (nvrtcAddNameExpression, before the compile), and loads the cubin.
//   R2: It looks each expression's instance up by the lowered name nvrtcGetLoweredName gives (copied:
//       the memory holding it is released when the program is destroyed).
//   R3: It returns the library, the kernels and the lowered names in the order of nameExpressions.
//   R4: Any failure (a source that does not compile, an instance the library does not have) throws,
//       with the library, if it was loaded, unloaded; the program is destroyed on every path, and
//       nothing is left held but the library returned.
//
// The check: exercise19.template-instances instantiates ops::scale<float, 2> and ops::scale<double,
// 3> (in that order, which is not the order of their names), a template in a namespace with a type
// and a constant parameter, and verifies that the lowered names are those NVRTC gives the same
// expressions in a compile of its own, and that each kernel, launched, computes x * Factor + 1 in
// its own type. Then it verifies that instantiate throws, holding no NVRTC program and no library,
// for a source that does not compile and when cuLibraryGetKernel fails for the second instance (the
// check turns the driver's answer into an error). The check stands between the code and NVRTC: it
// counts programs made and destroyed, and overwrites each lowered name when its program is
// destroyed, so a name used after nvrtcDestroyProgram is a wrong name.
//
// Learn it in: lesson 19, step 5 ("Templates: name expressions, not guessed names")
Instances instantiate(const std::string& source, const std::vector<std::string>& nameExpressions, CUdevice dev) {
  wb::notDone();
}

// Exercise 3 of 3 (disk-cache): A disk cache of compiled kernels keyed by everything that changes the cubin
//
// Task: A server compiles the same kernels in every process it starts, and a compile costs far more
// than a load. (NVRTC 12.9 and newer keeps a cache of its own through the driver's compute cache,
// unless --no-cache is given; one of your own also works with older NVRTC, and you decide where it
// lives and what it keys by.) Write cachedCompile. Anyone who can write to dir can plant a cubin
// that the cache then serves, so dir must be private.
//
//   R1: When an entry made from exactly these inputs is in the folder dir and intact, it returns
//       its cubin without compiling; otherwise it calls compile(inputs), stores what it returns in
//       dir, and returns it.
//   R2: The key is every field of CompileInputs (the source, the options, the compute capability,
//       NVRTC's version and build, the driver version), spelled so that different inputs never
//       spell the same key: the options {"-DA=1", "-DB=2"} are not the one option "-DA=1 -DB=2",
//       and compute capability 1.10 is not 11.0.
//   R3: Each entry is one file directly in dir that holds its key, compared in full on every hit (a
//       file name made from a hash only says where to look), then the cubin; an entry holding
//       another key is a miss.
//   R4: A damaged entry (cut short, say) is a miss, never an error.
//   R5: An entry is never read half-written: it is written under another name, then renamed into
//       place; never written into an entry's own file.
//   R6 (not checked: two writers at once collide only sometimes): The name it writes under is one
//       no other writer uses (mkstemp), process or thread.
//   R7: When dir does not exist (its parent does), it creates it with mode 0700.
//   R8: An existing dir owned by another user or writable by group or by others is not used at all
//       (compile every time, read and write nothing); any other existing dir of this user is used.
//
// The check: exercise19.disk-cache calls cachedCompile with a folder that does not exist yet and a
// compiler that counts its calls and returns a real cubin (from NVRTC) for the source. It verifies
// that the folder was made with mode 0700, that the first call compiled and returned the compiler's
// cubin, and that the same inputs again returned the same bytes without compiling. Then that
// changing each field alone compiled once more: the source, one option more, the same options split
// differently, the compute capability (and 1.10 against 11.0), NVRTC's minor version, NVRTC's build
// and the driver version; and that the first inputs still hit afterwards. From the second call on
// it watches the folder (inotify, where the system has it): every file left in it arrived by a
// rename, and none was written in place. With the contents of two entries swapped, each set of
// inputs compiled again and got its own cubin; with every file cut to half its size, the first
// inputs compiled again and came back intact, and the cubin loads and runs. Last, in a folder
// anyone may write to (mode 0777), and in one only its group may write to (0770), the same inputs
// twice compiled twice and left no file there; in an existing folder of mode 0755 the second call
// hit. Two writers at once (processes or threads) are not provoked: that each writes under a name
// of its own is not checked.
//
// Learn it in: lesson 19, step 9 ("A compile cache keyed by what invalidates it")
std::vector<char> cachedCompile(const std::string& dir, const CompileInputs& inputs, const Compiler& compile) {
  wb::notDone();
}

}  // namespace ex19
