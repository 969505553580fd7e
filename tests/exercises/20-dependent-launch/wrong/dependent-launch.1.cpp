// Wrong (R2): launches with cuLaunchKernel, which takes no launch attribute
//
// "The kernel calls griddepcontrol.wait, so it is a dependent launch": the wait is only half of it.
// Without the attribute the launch is ordered behind the whole kernel before it, as ever. The capture
// records a plain edge (`edges[0].type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC` fails), and the
// injected failure of cuLaunchKernelEx never fires ("did not call cuLaunchKernelEx").
#include "exercises.hpp"

namespace ex20 {

void launchDependent(CUfunction f, unsigned blocks, unsigned threads, void** args, CUstream stream) {
  CU_CHECK(cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, stream, args, nullptr));
}

}  // namespace ex20
