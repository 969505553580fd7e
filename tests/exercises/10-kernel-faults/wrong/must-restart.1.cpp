// Wrong (R1): "a fault is a 7xx code": every code from 700 to 799 means restart, and nothing else
//
// The 7xx block holds most launch faults, but also errors that leave the context working, such as
// CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED (712) from registering memory twice, and it misses the
// faults the reference numbers elsewhere: the check's `restart` fails for
// CUDA_ERROR_MPS_CLIENT_TERMINATED (810) and CUDA_ERROR_EXTERNAL_DEVICE (911) (and CUDA 13's
// CUDA_ERROR_CONTAINED, 226), and `!restart` for the double registration.
#include "exercises.hpp"

namespace ex10 {

bool mustRestart(CUresult error) { return error >= 700 && error <= 799; }

}  // namespace ex10
