// Kernels for lesson 17 (processes). extern "C", so the host finds them by name.
//
// announced_gate is lesson 09's gate (kernels/streams.cu) with one addition: it says when it has
// started. Another process's kernel is to run while this one waits; the host that launched it waits
// for *running before it tells the other process to go, so "this one was waiting" is known, not
// assumed from a launch that may not have reached the GPU yet.

//! [announced-gate]
// Writes 1 to *running as soon as it runs; then waits until *gate != 0 or deadline_ns have passed
// (by the GPU's global nanosecond timer), and writes 1 ("released") or 2 ("timed out") to *outcome.
// All three words live in pinned host memory.
extern "C" __global__ void announced_gate(volatile unsigned int* running, const volatile unsigned int* gate,
                                          unsigned long long deadline_ns, volatile unsigned int* outcome) {
  *running = 1;
  __threadfence_system();
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    if (*gate != 0) {
      *outcome = 1;
      return;
    }
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < deadline_ns);
  *outcome = 2;
}
//! [announced-gate]
