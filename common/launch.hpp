// The course's checked kernel launch. Launches are asynchronous: a kernel that faults is reported
// by some later call, which names the wrong line. With WORKBOOK_SYNC_LAUNCHES=1 in the environment,
// wb::launch waits for every kernel right after launching it, so a fault is reported at its
// launch, naming the kernel: a debug mode, slow, for finding the launch that faulted.
#pragma once

#include <cuda.h>

namespace wb {

// Whether WORKBOOK_SYNC_LAUNCHES=1 is set (read once).
bool syncLaunches();

// cuLaunchKernel of f over blocks x threads (1-D) in stream s, checked; with syncLaunches() also
// waited for. A failure throws wb::DriverError naming the kernel and the caller's file and line
// (GCC and Clang fill them in at the call).
void launch(CUfunction f, const char* name, unsigned blocks, unsigned threads, void** args, CUstream s = nullptr,
            const char* file = __builtin_FILE(), int line = __builtin_LINE());

}  // namespace wb
