// Lesson 18's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-18

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
// Task: An inference server moves activations from one GPU to the next, and at times between two
// contexts of one GPU. Where two devices can access each other, the copy should go over the link
// between them; where they cannot (another PCIe root, a virtual machine, an IOMMU), it must still
// work. Write copyAcross, where stream is a stream of srcCtx. When both contexts are on one device
// there is no pair of devices to ask about.
//
//   R1: When both contexts are on one device (two contexts of one GPU, or one context twice), it
//       enqueues cuMemcpyPeerAsync in stream and returns without waiting.
//   R2: When they are on two devices and cuDeviceCanAccessPeer says that each can access the
//       other's memory, it makes sure peer access is enabled in both directions (from dstCtx to
//       srcCtx's memory and from srcCtx to dstCtx's; CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED is what
//       you wanted, any other error throws), then enqueues cuMemcpyPeerAsync in stream and returns
//       without waiting.
//   R3: Otherwise it stages the bytes through pinned host memory: it waits for stream (the source
//       may still be being written there), copies down with cuMemcpyDtoH into a buffer from
//       cuMemHostAlloc(CU_MEMHOSTALLOC_PORTABLE) (pinned for both contexts), copies up with
//       cuMemcpyHtoD, frees the buffer, and returns once the bytes have arrived.
//   R4: A call that fails throws: its error goes on.
//   R5: On every path, a failed call's too, it leaves the calling thread's context stack as it
//       found it and holds nothing more than before.
//
// The check: exercise18.copy-across first copies between two contexts of device 0 (its primary
// context and one the check creates), with no context current: with the stream held by a gate
// kernel and the source written behind the gate, copyAcross must return while the gate still waits,
// with no context current still, and once the gate opens dst must hold the new bytes (an odd count
// of them) and nothing past them; so must a copy from the primary context to itself; a
// cuMemcpyPeerAsync that fails (the check turns its answer into an error) must make it throw with
// the stack as it was. With two devices (with one, the exercise
// reports itself skipped after that part, with the reason) it copies from device 0 to device 1, the
// source written before the call (whether enabling peer access waits for a running kernel, the
// reference does not say), and back with the gate as before, with device 0's primary context
// current; where the devices can access each other it verifies that peer access is then enabled in
// both directions (cuCtxEnablePeerAccess answers CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED), and that
// a cuCtxEnablePeerAccess failing with CUDA_ERROR_TOO_MANY_PEERS makes it throw with the stack as
// it was. Then it makes cuDeviceCanAccessPeer (and cuDeviceGetP2PAttribute's
// CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED) answer 0 for one direction, and then for the other, and
// verifies that each copy was staged: copyAcross waited for the work in the stream (the check opens
// the gate once it waits) and the bytes had arrived when it returned, holding no pinned memory
// more; and that a failing cuMemcpyHtoD makes it throw with no pinned memory held and the stack as
// it was.
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
// idempotent. Write enableAllPeers. CUDA_ERROR_TOO_MANY_PEERS means the hardware has no room for
// more peers (the programming guide: without NVSwitch, eight peer connections per device), which
// the caller must hear about.
//
//   R1: For every ordered pair of different contexts (i, j), if the device of contexts[i] can access
//       the device of contexts[j] (cuDeviceCanAccessPeer, asked for that direction: access need not
//       be symmetric), it enables access from contexts[i] to the memory of contexts[j], and not for
//       the other pairs. Each context is on a device of its own, in any order of devices: it finds
//       each one's device with cuCtxGetDevice.
//   R2: It is idempotent: CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED is success, and a second call
//       returns as the first did.
//   R3: Every other error of cuCtxEnablePeerAccess throws (CU_CHECK), CUDA_ERROR_TOO_MANY_PEERS
//       included.
//   R4: It returns the pairs of context indexes whose devices cannot access each other, in the
//       order (0, 1), (0, 2), ..., (1, 0), ...
//   R5: It leaves the calling thread's context stack as it found it, on every path (a throw too).
//
// The check: exercise18.enable-all-peers calls enableAllPeers on no context and on device 0's
// primary context alone, with no context current, and verifies that both return no pair and leave
// no context current. With two devices or more (at most eight are used, so that no device needs
// more peers than the programming guide promises; with one device the exercise reports itself
// skipped after that part, with the reason) it passes every device's primary context in reverse
// order of the devices, with device 0's context current, and makes cuDeviceCanAccessPeer answer 0
// from the last device to device 0 (that direction only). It calls enableAllPeers twice and
// verifies that neither call threw, that both returned exactly the pairs cuDeviceCanAccessPeer
// answers 0 for, in order, that access is enabled for every other pair and not for those
// (cuCtxEnablePeerAccess answers CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED where it is), and that the
// context stack is as it was; then that a cuCtxEnablePeerAccess failing with
// CUDA_ERROR_TOO_MANY_PEERS makes it throw, with the stack as it was.
//
// Learn it in: lesson 18, step 1 ("Which device can access which"), and step 4 ("Enabling access, one direction at a time")
std::vector<PeerPair> enableAllPeers(const std::vector<CUcontext>& contexts) {
  wb::notDone();
}

// Exercise 3 of 3 (staged-copier): A staged device-to-device copy that overlaps its two halves
//
// Task: Where two GPUs cannot access each other, a copy between them goes through host memory: down
// from the first device, then up to the second. Done one after the other, each link idles while the
// other works, and the copy takes as long as both. Write StagedCopier; its constructor is called
// with a context current.
//
//   R1: The constructor allocates two staging buffers of chunkBytes each with
//       cuMemHostAlloc(CU_MEMHOSTALLOC_PORTABLE), so that every context treats them as pinned; they
//       are the only pinned memory the copier makes. The destructor frees them.
//   R2: copy copies bytes from src (memory of srcCtx) to dst (memory of dstCtx), srcCtx and dstCtx
//       two contexts or the same one, in chunks of at most chunkBytes (the last one may be shorter;
//       0 bytes copy nothing), and returns once every byte has arrived, with none written past the
//       end.
//   R3: It alternates between the buffers: chunk i goes down into buffer i % 2 in a stream of
//       srcCtx and up from it in a stream of dstCtx, the copy up waiting for its copy down (an
//       event of srcCtx's stream; cuStreamWaitEvent accepts an event of another context), and the
//       copy down into a buffer waiting for the copy up that last read it. So chunk i + 1 comes
//       down while chunk i goes up.
//   R4: On every path, a failed call's too (it waits for what was enqueued, then lets the error go
//       on), it leaves the calling thread's context stack as it found it and destroys the streams
//       and events it made.
//
// The check: exercise18.staged-copier copies from device 0's primary context to a context the check
// creates, on device 1 where there are two devices, else on device 0, with a copier made while
// device 0's primary context is current and used with no context current. It verifies that the
// constructor allocated two buffers with CU_MEMHOSTALLOC_PORTABLE (cuMemHostGetFlags) and the
// destructor freed them; that three chunks and a part, less than a chunk, exactly two chunks and 0
// bytes arrive exactly, with nothing written past the end, and so do 4 MiB through 4 KiB chunks
// (1024 of them), and three chunks and a part from device 0's primary context to itself; that copy
// allocates no pinned memory, holds nothing more afterwards and leaves the context stack as it
// was; and that when the third copy up fails (the check turns its answer into an error) copy
// throws, holding nothing more, with the stack as it was. Then, between device
// 0's and device 1's primary contexts (with one device, its primary context twice), where both
// devices have two copy engines (CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT; otherwise that case
// reports itself skipped), it times a 256 MiB copy through chunks of 8 MiB against copying down
// whole and then up whole through one pinned buffer, each the best of three in this run, and
// verifies that the copier took at most 0.8 of that time. That each copy waits for the one it must
// follow is seen only through the bytes that arrive: a missing wait corrupts some of the 1024
// chunks in practice, but the check cannot force that race.
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
