// Wrong (R2 R3): restarts on every error: "after any failure the process cannot be trusted"
//
// Safe-looking, and it turns one oversized request into an outage. The check's `!restart` fails for
// each of the six errors after which the context went on working, and `!onNotReady` for
// CUDA_ERROR_NOT_READY, which is not even an error.
#include "exercises.hpp"

namespace ex10 {

bool mustRestart(CUresult error) { return error != CUDA_SUCCESS; }

}  // namespace ex10
