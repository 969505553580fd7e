// Kernels for lesson 20 (programmatic dependent launch). extern "C", so the host finds them by name.
//
// held_primary is a primary that lets its dependents launch and then waits for the host (like the
// gate of lesson 09), so the window in which a secondary could run beside it is as wide as the host
// wants; secondary notes what it saw before and after its wait; chain_link is one short kernel of a
// chain in which each link reads what the one before it wrote. Each notes times from %globaltimer,
// which the PTX ISA calls "a predefined, 64-bit global nanosecond timer", "intended for use by NVIDIA
// tools", whose behaviour "is target-specific and may change or be removed in future GPUs".
//
// griddepcontrol needs sm_90 (PTX ISA: introduced in PTX ISA 7.8, "Requires sm_90 or higher"). The
// fatbin holds machine code for sm_75 to sm_90: for the older architectures the kernels build
// without it, and the host never launches them on a device below compute capability 9.0.

__device__ __forceinline__ unsigned long long nowNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

//! [grid-dependency]
// The two halves of programmatic dependent launch, as the CUDA headers define
// cudaGridDependencySynchronize() and cudaTriggerProgrammaticLaunchCompletion().
// The secondary's side: wait until every prerequisite grid in flight has completed and its memory
// operations are performed and visible to this grid (griddepcontrol.wait).
__device__ __forceinline__ void waitForPrerequisites() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
// The primary's side: this block lets the dependents be scheduled once every block of the grid has
// done so or exited (griddepcontrol.launch_dependents). It makes nothing visible by itself.
__device__ __forceinline__ void launchDependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
//! [grid-dependency]

// One thread: a primary that triggers and then waits for the host. Its state (pinned memory the
// host reads): 1 waiting, 2 released, 3 gave up at deadline_ns. times[0] is its start, times[1] its
// end, after every write of its result; before taking it, it lets the timer run on for 2
// microseconds, so that the end is timed after anything that happened before the gate opened,
// whatever the timer's resolution.
//! [held-primary]
// *early is written and fenced before the trigger (PTX ISA: a release fence before
// launch_dependents "synchronizes with the start of a dependent grid"); *late only after the gate.
extern "C" __global__ void held_primary(unsigned int* early, unsigned int* late,
                                        const volatile unsigned int* gate, unsigned long long deadline_ns,
                                        volatile unsigned int* state, unsigned long long* times,
                                        unsigned int trigger) {
  times[0] = nowNs();
  *early = 1;
  __threadfence();
  if (trigger) launchDependents();
  *state = 1;
  __threadfence_system();
  const unsigned long long start = nowNs();
  unsigned int outcome = 3;
  do {
    if (*gate != 0) {
      outcome = 2;
      break;
    }
    __nanosleep(1000);
  } while (nowNs() - start < deadline_ns);
  *late = 1;
  __threadfence();
  const unsigned long long released = nowNs();
  while (nowNs() - released < 2000) {
  }
  times[1] = nowNs();
  *state = outcome;
  __threadfence_system();
}
//! [held-primary]

//! [secondary]
// One thread. Its preamble notes the time, reads *early and *late into seen[0] and seen[1], and
// says it has started (*started = 1, pinned memory the host watches). Then it waits for its
// prerequisite grids, notes the time again and reads *late into seen[2]. times[0]: the preamble;
// times[1]: right after the wait.
extern "C" __global__ void secondary(const volatile unsigned int* early, const volatile unsigned int* late,
                                     volatile unsigned int* started, unsigned long long* times,
                                     unsigned int* seen) {
  times[0] = nowNs();
  seen[0] = *early;
  seen[1] = *late;
  *started = 1;
  __threadfence_system();
  waitForPrerequisites();
  times[1] = nowNs();
  seen[2] = *late;
}
//! [secondary]

//! [chain-link]
// Link `index` of a chain, one thread. It notes when it started, waits for the link before it (with
// no programmatic dependency, stream order has already waited and the wait returns at once), notes
// when its body began, lets the next link launch, adds 1 to *value (what the link before it left),
// does `work` rounds of arithmetic, and notes when it ended: times[3 * index + 0, 1, 2].
extern "C" __global__ void chain_link(unsigned int* value, unsigned long long* times, unsigned int index,
                                      unsigned int work) {
  const unsigned long long start = nowNs();
  waitForPrerequisites();
  const unsigned long long body = nowNs();
  launchDependents();
  float x = static_cast<float>(index);
  for (unsigned int r = 0; r < work; ++r) x = x * 0.999f + 0.001f;
  *value += x == -1.0f ? 2u : 1u;  // x never reaches -1: adds 1, and keeps the loop from being dropped
  unsigned long long* mine = times + 3ull * index;
  mine[0] = start;
  mine[1] = body;
  mine[2] = nowNs();
}
//! [chain-link]
