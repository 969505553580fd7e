// Lesson 18's exercises. Replace each body with your solution, then run ctest -R exercise18.

// The starting bodies use none of their parameters and members yet (warnings are errors in some
// builds; Clang's warning about a private member must be silenced before the class is declared).
#pragma GCC diagnostic ignored "-Wunused-parameter"
#ifdef __clang__
#pragma clang diagnostic ignored "-Wunused-private-field"
#endif

#include "exercises.hpp"
#include "exercise.hpp"

namespace ex18 {

// Exercise 1 of 3 (copy-across): A device-to-device copy that takes the link when there is one
//
// Task: An inference server moves activations from one GPU to the next. Where the two devices can
// access each other, the copy should go over the link between them; where they cannot (another
// PCIe root, a virtual machine), it must still work. Write copyAcross: if cuDeviceCanAccessPeer
// says each device can access the other's memory, make sure peer access is enabled in both
// directions (from dstCtx to srcCtx's memory and from srcCtx to dstCtx's; a call that finds it
// already enabled is not an error), then enqueue cuMemcpyPeerAsync in stream, a stream of srcCtx,
// and return without waiting. Otherwise stage the bytes through pinned host memory: wait for
// stream (the source may still be being written there), copy down into a buffer allocated with
// CU_MEMHOSTALLOC_PORTABLE (pinned for both contexts), copy up, free it, and return once the bytes
// have arrived. Either way, leave the calling thread's current context as you found it.
//
// The check: exercise18.copy-across needs two devices (with one it reports itself skipped, with the
// reason). With device 0's context current, a kernel fills a 16 MiB source in a stream of device
// 0's context and copyAcross copies it to device 1 in that stream; then back from device 1 to device
// 0 in a stream of device 1's context, with an odd size. It verifies that every byte arrived both
// ways and that the current context is device 0's after each call; and, where the devices can access
// each other, that peer access is enabled in both directions afterwards (cuCtxEnablePeerAccess then
// answers CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED), which a copy that never enabled it fails.
//
// Learn it in: lesson 18, step 3 ("cuMemcpyPeer needs no peer access"), step 4 ("Enabling access, one direction at a time"), and step 6 ("Peer copy against staging through host memory")
void copyAcross(CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src, CUcontext srcCtx, std::size_t bytes,
                CUstream stream) {
  wb::notDone();
}

// Exercise 2 of 3 (enable-all-peers): Enable every peer, twice, without an error
//
// Task: Every process of a multi-GPU service calls its set-up code at start, and again whenever a
// component (a communicator, a memory pool, a plug-in) initialises, so the set-up must be
// idempotent. Write enableAllPeers: for every ordered pair of different contexts (i, j), if the
// device of contexts[i] can access the device of contexts[j] (cuDeviceCanAccessPeer), enable access
// from contexts[i] to the memory of contexts[j]; treat CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED as
// success, and let every other error throw (CU_CHECK): CUDA_ERROR_TOO_MANY_PEERS means the hardware
// has no room for more peers, which the caller must hear about. Return the pairs whose devices
// cannot access each other, in the order (0, 1), (0, 2), ..., (1, 0), ... Each context is on its own
// device. Leave the calling thread's current context as you found it.
//
// The check: exercise18.enable-all-peers needs two devices (with one it reports itself skipped, with
// the reason). It calls enableAllPeers on the primary contexts of every device twice; verifies that
// neither call threw and both returned exactly the pairs for which cuDeviceCanAccessPeer is 0; that
// for every other pair access is enabled (cuCtxEnablePeerAccess from that context answers
// CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED); and that the current context afterwards is the one before.
//
// Learn it in: lesson 18, step 1 ("Which device can access which"), and step 4 ("Enabling access, one direction at a time")
std::vector<PeerPair> enableAllPeers(const std::vector<CUcontext>& contexts) {
  wb::notDone();
}

// Exercise 3 of 3 (staged-copier): A staged device-to-device copy that overlaps its two halves
//
// Task: Where two GPUs cannot access each other, a copy between them goes through host memory: down
// from the first device, then up to the second. Done one after the other, each link idles while the
// other works, and the copy takes as long as both. Write StagedCopier. The constructor, called with
// a context current, allocates two staging buffers of chunkBytes each with
// cuMemHostAlloc(CU_MEMHOSTALLOC_PORTABLE), so that every context treats them as pinned. copy splits the bytes into chunks of at most chunkBytes and
// alternates between the buffers: chunk i goes down into buffer i % 2 in a stream of srcCtx and up
// from it in a stream of dstCtx, the copy up waiting for its copy down (an event of srcCtx's stream;
// cuStreamWaitEvent accepts an event of another context), and the copy down into a buffer waiting
// for the copy up that last read it. So chunk i + 1 comes down while chunk i goes up. copy returns
// once every byte has arrived, leaves the current context as it found it, and destroys the streams
// and events it made; the destructor frees the buffers. srcCtx and dstCtx may be the same context.
//
// The check: exercise18.staged-copier copies from device 0 to device 1, or, on a machine with one
// device, between two buffers of device 0. It verifies that an odd size (three chunks and a part)
// and a size smaller than one chunk arrive exactly, with nothing written past the end, and that the
// current context is unchanged. Then it times, in this run, a 256 MiB copy through chunks of 8 MiB
// against copying down whole and then up whole through one pinned buffer, each the best of three,
// and verifies that the copier took at most 0.8 of that time.
//
// Learn it in: lesson 18, step 6 ("Peer copy against staging through host memory"), and lesson 09, step 3 ("Overlapping a copy with a kernel")
StagedCopier::StagedCopier(std::size_t chunkBytes) {
  wb::notDone();
}

StagedCopier::~StagedCopier() {}

void StagedCopier::copy(CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src, CUcontext srcCtx, std::size_t bytes) {
  wb::notDone();
}

}  // namespace ex18
