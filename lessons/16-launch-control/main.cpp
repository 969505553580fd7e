// Lesson 16: launch control: what a kernel needs, what a launch may ask for, and where it runs.
//
// What you learn: the driver reads a kernel's needs from its image (cuFuncGetAttribute: registers,
// static shared memory, the most threads a block may have); more than 48 KiB of dynamic shared
// memory needs CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES raised, up to the device's opt-in
// limit. The occupancy calls say how many blocks of a kernel an SM holds and which block size fills
// it. cuLaunchKernelEx takes launch attributes: thread-block clusters (compute capability 9.0), and a
// cooperative launch, whose blocks are all resident at once, so that a barrier across the grid is
// safe. Then green contexts: the SMs split into partitions, a green context and a stream on each; a
// kernel there runs on its partition's SMs only, and one that holds every SM of one partition does
// not hold up a kernel in the other, where on the whole device it does.
//
// APIs: cuFuncGetAttribute, cuFuncSetAttribute, cuKernelGetFunction, cuFuncLoad,
//       cuOccupancyMaxActiveBlocksPerMultiprocessor, cuOccupancyMaxPotentialBlockSize,
//       cuOccupancyAvailableDynamicSMemPerBlock, cuOccupancyMaxPotentialClusterSize,
//       cuOccupancyMaxActiveClusters, cuLaunchKernelEx, cuDeviceGetAttribute,
//       cuDeviceGetDevResource, cuDevSmResourceSplitByCount, cuDevResourceGenerateDesc,
//       cuGreenCtxCreate, cuCtxFromGreenCtx, cuGreenCtxGetDevResource, cuGreenCtxStreamCreate,
//       cuStreamGetGreenCtx, cuGreenCtxDestroy
// Run:  ctest -R lesson16   (or build/lessons/lesson16-launch-control)
#include "launch_control.hpp"  // Holding and smsOf: shared with the tests
#include "workbook.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <initializer_list>
#include <iterator>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using wb::Holding, wb::smsOf;

int deviceAttribute(CUdevice dev, CUdevice_attribute what) {
  int value = 0;
  CU_CHECK(cuDeviceGetAttribute(&value, what, dev));
  return value;
}

int funcAttribute(CUfunction f, CUfunction_attribute what) {
  int value = 0;
  CU_CHECK(cuFuncGetAttribute(&value, what, f));
  return value;
}

int blocksPerSm(CUfunction f, int threads, size_t dynamicBytes) {
  int blocks = 0;
  CU_CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, threads, dynamicBytes));
  return blocks;
}

//! [load]
// A kernel of a library as its CUfunction in the current context, loaded now: this lesson runs
// kernels that wait on purpose, and loading may wait for the kernels running in the context.
CUfunction loadedHere(CUkernel kernel) {
  CUfunction f = nullptr;
  CU_CHECK(cuKernelGetFunction(&f, kernel));
#if CUDA_VERSION >= 12040
  CU_CHECK(cuFuncLoad(f));  // CUDA 12.4; before it, the warm-up launches in main() load them
#endif
  return f;
}
//! [load]

// A kernel of launch_control.fatbin: the CUkernel, which a launch runs in the context of the stream
// it is given, and its CUfunction in the primary context, whose attributes this lesson reads and sets.
struct Kernel {
  CUkernel kernel = nullptr;
  CUfunction fn = nullptr;
  CUfunction anywhere() const { return reinterpret_cast<CUfunction>(kernel); }
};

struct Kernels {
  Kernel smemSum, where, hold, gridSum, clusterShape;
  static Kernels load(CUlibrary library) {
    Kernels k;
    for (auto [name, kernel] : {std::pair{"smem_sum", &k.smemSum}, {"where", &k.where}, {"hold", &k.hold},
                                {"grid_sum", &k.gridSum}, {"cluster_shape", &k.clusterShape}}) {
      CU_CHECK(cuLibraryGetKernel(&kernel->kernel, library, name));
      kernel->fn = loadedHere(kernel->kernel);
    }
    return k;
  }
};

// n words of device memory, freed at scope exit.
struct DeviceWords {
  CUdeviceptr ptr = 0;
  explicit DeviceWords(size_t n) { CU_CHECK(cuMemAlloc(&ptr, n * sizeof(unsigned))); }
  ~DeviceWords() { cuMemFree(ptr); }
  DeviceWords(const DeviceWords&) = delete;
  DeviceWords& operator=(const DeviceWords&) = delete;
  std::vector<unsigned> read(size_t n) const {
    std::vector<unsigned> v(n);
    CU_CHECK(cuMemcpyDtoH(v.data(), ptr, n * sizeof(unsigned)));
    return v;
  }
};

// The words smem_sum adds up: word i is i % 7 + 1, as many as the device's largest shared memory
// per block holds; and room for the sums of two blocks.
struct SumInput {
  DeviceWords words, sums{2};
  explicit SumInput(size_t capacity) : words(capacity) {
    std::vector<unsigned> host(capacity);
    for (size_t i = 0; i < capacity; ++i) host[i] = static_cast<unsigned>(i % 7 + 1);
    CU_CHECK(cuMemcpyHtoD(words.ptr, host.data(), capacity * sizeof(unsigned)));
  }
  static unsigned expected(unsigned n) {
    unsigned sum = 0;
    for (unsigned i = 0; i < n; ++i) sum += i % 7 + 1;
    return sum;
  }
};

// smem_sum over the first n words: 2 blocks of `threads`, each with n * 4 bytes of dynamic shared memory.
CUresult launchSum(CUfunction smemSum, unsigned threads, unsigned n, const SumInput& in) {
  CUdeviceptr words = in.words.ptr, sums = in.sums.ptr;
  void* args[] = {&words, &n, &sums};
  return cuLaunchKernel(smemSum, 2, 1, 1, threads, 1, 1, n * sizeof(unsigned), nullptr, args, nullptr);
}

bool sumsRight(const SumInput& in, unsigned n) {
  CU_CHECK(cuCtxSynchronize());
  const std::vector<unsigned> sums = in.sums.read(2);
  return sums[0] == SumInput::expected(n) && sums[1] == SumInput::expected(n);
}

//! [attributes]
// What each kernel needs, as the driver read it from the kernel's image, beside what a block of the
// device may have. MAX_THREADS_PER_BLOCK is the most threads a launch of that kernel may ask for.
void kernelNeeds(CUdevice dev, const Kernels& k) {
  const int maxThreads = deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  const int registers = deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  const int shared = deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  std::printf("%-14s %9s %12s %11s %12s %13s\n", "kernel", "registers", "static smem", "local", "max threads",
              "max dyn smem");
  bool fits = true;
  for (const auto& [name, f] :
       {std::pair{"smem_sum", k.smemSum.fn}, {"where", k.where.fn}, {"hold", k.hold.fn},
        {"grid_sum", k.gridSum.fn}, {"cluster_shape", k.clusterShape.fn}}) {
    const int regs = funcAttribute(f, CU_FUNC_ATTRIBUTE_NUM_REGS);
    const int staticBytes = funcAttribute(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    const int local = funcAttribute(f, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    const int threads = funcAttribute(f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    const int dynamic = funcAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    std::printf("%-14s %9d %10d B %9d B %12d %13s\n", name, regs, staticBytes, local, threads,
                wb::bytes(static_cast<size_t>(dynamic)).c_str());
    fits = fits && regs * threads <= registers && staticBytes <= shared && threads <= maxThreads;
  }
  std::printf("a block of this device: at most %d threads, %d registers, %s of shared memory\n", maxThreads,
              registers, wb::bytes(static_cast<size_t>(shared)).c_str());
  wb::expect(fits,
             "every kernel's registers, at its most threads, and its static shared memory within a block's",
             "a kernel that needs more than a block has");
}
//! [attributes]

// smem_sum was compiled with __launch_bounds__(256): a launch with more threads is refused.
void launchBounds(const Kernels& k, const SumInput& in) {
  const int most = funcAttribute(k.smemSum.fn, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  const CUresult over = launchSum(k.smemSum.fn, 512, 1024, in);
  const CUresult at = launchSum(k.smemSum.fn, static_cast<unsigned>(most), 1024, in);
  const bool right = at == CUDA_SUCCESS && sumsRight(in, 1024);
  std::printf("smem_sum: MAX_THREADS_PER_BLOCK %d; a launch with 512 threads: %s; with %d: %s, sums %s\n", most,
              wb::errorName(over).c_str(), most, wb::errorName(at).c_str(), right ? "right" : "WRONG");
  wb::expect(most <= 256 && over != CUDA_SUCCESS && right,
             "a launch above the kernel's launch bounds refused, one at them run",
             "the maximum was " + std::to_string(most) + ", the launch with 512 threads " + wb::errorName(over));
}

//! [opt-in]
// By default a kernel may have a block's shared memory minus its static shared memory. A launch that
// asks for more dynamic shared memory is refused until the kernel's attribute is raised.
void beyond48KiB(CUdevice dev, const Kernels& k, const SumInput& in) {
  const CUfunction f = k.smemSum.fn;
  const int perBlock = deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  const int optIn = deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  const int staticBytes = funcAttribute(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  const int byDefault = funcAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  std::printf("shared memory per block: %s, %s with opt-in; "
              "smem_sum: %d B static, MAX_DYNAMIC_SHARED_SIZE_BYTES %s\n",
              wb::bytes(perBlock).c_str(), wb::bytes(optIn).c_str(), staticBytes,
              wb::bytes(byDefault).c_str());
  wb::expect(byDefault == perBlock - staticBytes, "the default: a block's shared memory minus the static",
             "the attribute was " + std::to_string(byDefault));
  if (optIn <= perBlock) return (void)std::printf("this device offers no more shared memory with opt-in\n");
  const unsigned n = static_cast<unsigned>(std::min(96 << 10, optIn - staticBytes)) / 4u;  // words
  const CUresult refused = launchSum(f, 256, n, in);
  CU_CHECK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(n * 4)));
  const CUresult ran = launchSum(f, 256, n, in);
  const bool right = ran == CUDA_SUCCESS && sumsRight(in, n);
  std::printf("a launch with %s of dynamic shared memory: %s; after cuFuncSetAttribute(%s): %s, sums %s\n",
              wb::bytes(n * 4).c_str(), wb::errorName(refused).c_str(), wb::bytes(n * 4).c_str(),
              wb::errorName(ran).c_str(), right ? "right" : "WRONG");
  wb::expect(refused != CUDA_SUCCESS && right, "the launch refused, then run once the attribute allowed it",
             "the first launch " + wb::errorName(refused) + ", the second " + wb::errorName(ran));
  //! [opt-in]
  //! [opt-in-limit]
  // Past the opt-in limit minus the static: an error (documented), the old value kept (observed).
  const CUresult beyond =
      cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optIn - staticBytes + 1);
  const int after = funcAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  std::printf("cuFuncSetAttribute(opt-in limit - static + 1 B): %s; the attribute stays %s\n",
              wb::errorName(beyond).c_str(), wb::bytes(static_cast<size_t>(after)).c_str());
  wb::expect(beyond != CUDA_SUCCESS && after == static_cast<int>(n * 4),
             "a value past the limit refused, the old kept",
             wb::errorName(beyond) + ", the attribute " + std::to_string(after));
  // All of it, for the occupancy table of step 3.
  CU_CHECK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optIn - staticBytes));
}
//! [opt-in-limit]

//! [occupancy-table]
// How many blocks of smem_sum (256 threads) an SM holds as each block asks for more dynamic shared
// memory, and what they take of the SM's threads, block slots, shared memory and registers.
void occupancyTable(CUdevice dev, const Kernels& k) {
  const CUfunction f = k.smemSum.fn;
  const int threads = 256, staticBytes = funcAttribute(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  const int regs = funcAttribute(f, CU_FUNC_ATTRIBUTE_NUM_REGS);
  const int most = funcAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);  // raised in step 2
  const int smThreads = deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  const int smBlocks = deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  const int smShared = deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  const int smRegisters = deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  std::printf("an SM: %d threads, %d blocks, %s of shared memory, %d registers\n", smThreads, smBlocks,
              wb::bytes(static_cast<size_t>(smShared)).c_str(), smRegisters);
  std::printf("  %-22s %14s %13s\n", "dynamic smem per block", "blocks per SM", "warps per SM");
  int previous = INT_MAX;
  bool neverMore = true, within = true;
  for (int dynamic : {0, 8 << 10, 16 << 10, 32 << 10, 48 << 10, 64 << 10, 96 << 10, 160 << 10, most}) {
    if (dynamic > most) continue;
    const int blocks = blocksPerSm(f, threads, static_cast<size_t>(dynamic));
    std::printf("  %-22s %14d %13d\n", wb::bytes(static_cast<size_t>(dynamic)).c_str(), blocks,
                blocks * threads / 32);
    neverMore = neverMore && blocks <= previous;
    within = within && blocks * threads <= smThreads && blocks <= smBlocks &&
             blocks * (dynamic + staticBytes) <= smShared && blocks * threads * regs <= smRegisters;
    previous = blocks;
  }
  wb::expect(neverMore, "more shared memory per block never giving more blocks",
             "a row with more blocks than the one above");
  wb::expect(within, "the blocks of every row within the SM's threads, blocks, shared memory and registers",
             "a row past one of them");
}
//! [occupancy-table]

//! [potential]
// The block size the occupancy calculator suggests for a kernel, and the smallest grid that keeps
// every SM as full as that block size can.
void potentialBlockSize(CUdevice dev, const Kernels& k) {
  const int warp = deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  const int sms = deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  bool sane = true;
  for (const auto& [name, f] : {std::pair{"smem_sum", k.smemSum.fn}, {"where", k.where.fn}}) {
    int minGrid = 0, size = 0;
    CU_CHECK(cuOccupancyMaxPotentialBlockSize(&minGrid, &size, f, nullptr, 0, 0));
    const int most = funcAttribute(f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
              perSm = blocksPerSm(f, size, 0);
    std::printf("%-9s suggested block size %4d (the kernel allows %4d): "
                "%d blocks per SM, minimum grid %d = %d x %d SMs\n",
                name, size, most, perSm, minGrid, perSm, sms);
    sane = sane && size > 0 && size % warp == 0 && size <= most && minGrid == perSm * sms;
  }
  wb::expect(sane, "whole warps, within the kernel's maximum, and a grid of blocks per SM times SMs",
             "other values");
}
//! [potential]

//! [available]
// The most dynamic shared memory per block at which the occupancy calculator still fits n blocks
// of this size on an SM (0 if none fits): a search over the calculator, the launch's own arithmetic.
size_t mostThatFits(CUfunction f, int threads, int n, size_t limit) {
  if (blocksPerSm(f, threads, 0) < n) return 0;
  size_t fits = 0, fails = limit + 1;
  while (fails - fits > 1) {
    const size_t mid = fits + (fails - fits) / 2;
    (blocksPerSm(f, threads, mid) >= n ? fits : fails) = mid;
  }
  return fits;
}

// The reverse question, asked two ways for 2 blocks of 256 threads. The search goes up to what the
// kernel may ask for (raised in step 2).
void availableShared(CUdevice dev, const Kernels& k) {
  const size_t limit =
      static_cast<size_t>(funcAttribute(k.smemSum.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES));
  size_t room = 0;
  CU_CHECK(cuOccupancyAvailableDynamicSMemPerBlock(&room, k.smemSum.fn, 2, 256));
  const size_t most = mostThatFits(k.smemSum.fn, 256, 2, limit);
  std::printf("cuOccupancyAvailableDynamicSMemPerBlock(2 blocks of 256 threads): %s (%zu B) each; "
              "with that, the calculator fits %d\n",
              wb::bytes(room).c_str(), room, blocksPerSm(k.smemSum.fn, 256, room));
  std::printf("the most at which the calculator fits 2: %zu B, %zu B %s; "
              "reserved by the system per block: %d B\n",
              most, room > most ? room - most : most - room,
              room > most ? "less" : room < most ? "more" : "the same",
              deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK));
  wb::expect(most > 0 && most <= room, "the calculator fitting 2 blocks at no more than the size named for 2",
             most == 0 ? "it fits none" : "it fits them with more");
}
//! [available]

//! [clusters]
// Eight blocks in clusters of two, asked for with a launch attribute; each block reads back its
// cluster's size, its rank in it and the cluster's index. Only where the device has clusters.
void clusters(CUdevice dev, const Kernels& k) {
  const int major = deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  const int supported = deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH);
  if (major < 9 || !supported)
    return (void)std::printf("compute capability %d.x, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH %d: "
                             "this device has no thread-block clusters, so this step is skipped\n",
                             major, supported);
  constexpr unsigned blocks = 8, perCluster = 2;
  CUlaunchAttribute cluster{};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = perCluster, cluster.value.clusterDim.y = 1, cluster.value.clusterDim.z = 1;
  CUlaunchConfig config{};
  config.gridDimX = blocks, config.gridDimY = 1, config.gridDimZ = 1;
  config.blockDimX = 32, config.blockDimY = 1, config.blockDimZ = 1;
  config.attrs = &cluster, config.numAttrs = 1;  // sharedMemBytes 0, hStream NULL: the legacy stream
  int largest = 0, resident = 0;
  CU_CHECK(cuOccupancyMaxPotentialClusterSize(&largest, k.clusterShape.fn, &config));
  CU_CHECK(cuOccupancyMaxActiveClusters(&resident, k.clusterShape.fn, &config));
  DeviceWords out(4 * blocks);
  void* args[] = {&out.ptr};
  CU_CHECK(cuLaunchKernelEx(&config, k.clusterShape.fn, args, nullptr));
  CU_CHECK(cuCtxSynchronize());
  //! [clusters]
  const std::vector<unsigned> seen = out.read(4 * blocks);  // per block: size, rank, cluster, SM
  bool shaped = true;
  for (unsigned b = 0; b < blocks; ++b) {
    const unsigned* mine = &seen[4 * b];
    shaped = shaped && mine[0] == perCluster && mine[1] == b % perCluster && mine[2] == b / perCluster;
  }
  for (unsigned b = 0; b < blocks; b += perCluster) {
    const unsigned *first = &seen[4 * b], *second = &seen[4 * (b + 1)];
    std::printf("  blocks %u and %u: cluster %u and %u, of %u and %u blocks, ranks %u and %u, "
                "on SMs %u and %u\n", b, b + 1, first[2], second[2], first[0], second[0],
                first[1], second[1], first[3], second[3]);
  }
  std::printf("cuOccupancyMaxPotentialClusterSize: %d blocks; cuOccupancyMaxActiveClusters (of 2): %d\n",
              largest, resident);
  wb::expect(shaped && largest >= static_cast<int>(perCluster) && resident >= 1,
             "every block in a cluster of 2 at its rank, and room for such clusters", "other shapes or no room");
}

//! [cooperative]
// A launch through cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_COOPERATIVE: the same as
// cuLaunchCooperativeKernel. The driver launches it only if every block can be resident at once.
CUresult launchCooperative(CUfunction f, unsigned blocks, unsigned threads, void** args) {
  CUlaunchAttribute cooperative{};
  cooperative.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  cooperative.value.cooperative = 1;
  CUlaunchConfig config{};
  config.gridDimX = blocks, config.gridDimY = 1, config.gridDimZ = 1;
  config.blockDimX = threads, config.blockDimY = 1, config.blockDimZ = 1;
  config.attrs = &cooperative, config.numAttrs = 1;
  return cuLaunchKernelEx(&config, f, args, nullptr);
}
//! [cooperative]

// grid_sum with as many blocks as the device holds at once (occupancy x SMs), then with one more.
void cooperative(CUdevice dev, const Kernels& k) {
  if (!deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH))
    return (void)std::printf("CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0: this step is skipped\n");
  const unsigned threads = 256, n = 1u << 20;
  const unsigned perSm = static_cast<unsigned>(blocksPerSm(k.gridSum.fn, threads, 0));
  const unsigned most =
      perSm * static_cast<unsigned>(deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  SumInput in(n);
  DeviceWords partial(most + 1), sync(2), out(most + 1);
  CU_CHECK(cuMemsetD32(sync.ptr, 0, 2));
  unsigned long long deadlineNs = 2'000'000'000ull;  // a block gives up waiting after 2 s instead of hanging
  unsigned count = n;
  void* args[] = {&in.words.ptr, &count, &partial.ptr, &sync.ptr, &deadlineNs, &out.ptr};
  const CUresult fits = launchCooperative(k.gridSum.fn, most, threads, args);
  CU_CHECK(cuCtxSynchronize());
  const std::vector<unsigned> totals = out.read(most), counters = sync.read(2);
  const unsigned expected = SumInput::expected(n);
  const bool allRight = std::all_of(totals.begin(), totals.end(), [&](unsigned t) { return t == expected; });
  const CUresult tooLarge = launchCooperative(k.gridSum.fn, most + 1, threads, args);
  std::printf("grid_sum, cooperative, %u blocks (%u per SM): %s; every block read the total %u "
              "after the barrier: %s; blocks that gave up waiting: %u\n",
              most, perSm, wb::errorName(fits).c_str(), expected, allRight ? "yes" : "NO", counters[1]);
  std::printf("one block more: %s\n", wb::errorName(tooLarge).c_str());
  wb::expect(fits == CUDA_SUCCESS && allRight && counters[1] == 0,
             "every block past the barrier with the total", "other results");
  wb::expect(tooLarge == CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "one block too many refused as too large",
             wb::errorName(tooLarge));
}

// The block size at which hold's blocks take every thread an SM has, so that no block of any kernel
// fits beside them: {0, 0} where no block size does that exactly.
struct Shape { unsigned threads = 0, perSm = 0; };
Shape fillingShape(CUdevice dev, CUfunction hold) {
  const int smThreads = deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  const int warp = deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  for (int t = funcAttribute(hold, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) / warp * warp; t >= warp;
       t -= warp) {
    const int blocks = blocksPerSm(hold, t, 0);
    if (blocks * t == smThreads) return {static_cast<unsigned>(t), static_cast<unsigned>(blocks)};
  }
  return {};
}

//! [whole-device]
// hold over the whole device, every thread of every SM taken; once every block is resident, one
// block of where in another stream. It finds no room until the hold's blocks give up (after 0.25 s).
void wholeDevice(CUdevice dev, const Kernels& k) {
  const Shape shape = fillingShape(dev, k.hold.fn);
  if (!shape.threads)
    return (void)std::printf("no block size of hold takes exactly every thread of an SM: skipped\n");
  const unsigned blocks =
      shape.perSm * static_cast<unsigned>(deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  CUstream a = nullptr, b = nullptr;
  CU_CHECK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
  CU_CHECK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
  wb::PinnedWords smOfWhere(1);
  {
    Holding hold(k.hold.fn, a, blocks, shape.threads, 0.25);
    hold.expectResident("every block of the hold resident at once");
    const std::set<unsigned> where = smsOf(k.where.fn, b, 1, smOfWhere);
    const unsigned gaveUp = hold.count(3);
    std::printf("hold in stream A: %u blocks of %u threads (%u per SM), all resident, "
                "on %zu distinct SMs\n", blocks, shape.threads, shape.perSm, hold.sms().size());
    std::printf("where in stream B, launched then: it ran (on SM %u) only after %u of the hold's blocks "
                "had timed out\n", *where.begin(), gaveUp);
    wb::expect(gaveUp > 0, "the kernel in stream B waiting until the hold gave up SMs",
               "it ran while every block held");
  }
  CU_CHECK(cuStreamDestroy(a));
  CU_CHECK(cuStreamDestroy(b));
}
//! [whole-device]

#if CUDA_VERSION >= 12040
//! [split]
// The device's SMs as a resource, split into at most two groups of at least minCount SMs each;
// what no group took is in `remaining`.
struct Split {
  CUdevResource whole{}, remaining{};
  std::vector<CUdevResource> groups;
};
Split splitSms(CUdevice dev, unsigned minCount) {
  Split s;
  CU_CHECK(cuDeviceGetDevResource(dev, &s.whole, CU_DEV_RESOURCE_TYPE_SM));
  unsigned count = 2;  // in: how many groups result has room for; out: how many were made
  s.groups.resize(count);
  CU_CHECK(cuDevSmResourceSplitByCount(s.groups.data(), &count, &s.whole, &s.remaining, 0, minCount));
  s.groups.resize(count);
  return s;
}
//! [split]

//! [green-context]
// A green context on one group of SMs, and a stream in it.
struct Partition {
  CUgreenCtx green = nullptr;
  CUcontext ctx = nullptr;  // the green context as a CUcontext, for the calls that take one
  CUstream stream = nullptr;
  unsigned sms = 0;
};
Partition openPartition(CUdevice dev, CUdevResource group) {
  Partition p;
  CUdevResourceDesc desc = nullptr;
  CU_CHECK(cuDevResourceGenerateDesc(&desc, &group, 1));
  CU_CHECK(cuGreenCtxCreate(&p.green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));  // the flag is required
  CU_CHECK(cuCtxFromGreenCtx(&p.ctx, p.green));
#if CUDA_VERSION >= 12050
  CU_CHECK(cuGreenCtxStreamCreate(&p.stream, p.green, CU_STREAM_NON_BLOCKING, 0));
#else  // 12.4: a stream created while the converted context is current belongs to the green context
  CU_CHECK(cuCtxPushCurrent(p.ctx));
  CU_CHECK(cuStreamCreate(&p.stream, CU_STREAM_NON_BLOCKING));
  CU_CHECK(cuCtxPopCurrent(&p.ctx));
#endif
  CUdevResource own{};
  CU_CHECK(cuGreenCtxGetDevResource(p.green, &own, CU_DEV_RESOURCE_TYPE_SM));
  p.sms = own.sm.smCount;
  return p;
}
//! [green-context]

// Every kernel loaded into the partition's context before any of them waits (see loadedHere).
void loadInto(const Partition& p, const Kernels& k) {
  CU_CHECK(cuCtxPushCurrent(p.ctx));
  for (const Kernel* kernel : {&k.smemSum, &k.where, &k.hold, &k.gridSum, &k.clusterShape}) loadedHere(kernel->kernel);
  CUcontext popped = nullptr;
  CU_CHECK(cuCtxPopCurrent(&popped));
}

void closePartition(Partition& p) {
  // Streams first: cuGreenCtxDestroy leaves them, and after it the 13.0 reference refuses even their
  // cuStreamDestroy (13.1 allows that one call).
  if (p.stream) CU_CHECK(cuStreamDestroy(p.stream));
  if (p.green) CU_CHECK(cuGreenCtxDestroy(p.green));
  p = Partition{};
}

struct Partitions { Partition a, b; bool ready = false; };  // false where the device or split gave no two

//! [partitions]
// Two partitions of at least 16 SMs each (fewer on a small device), each a green context with a stream.
Partitions makePartitions(CUdevice dev, const Kernels& k) {
  Partitions parts;
  CUdevResource probe{};
  const CUresult has = cuDeviceGetDevResource(dev, &probe, CU_DEV_RESOURCE_TYPE_SM);
  if (has != CUDA_SUCCESS) {
    std::printf("cuDeviceGetDevResource: %s: no green contexts here, steps 7 to 9 are skipped\n",
                wb::errorName(has).c_str());
    return parts;
  }
  const unsigned minCount = std::min(16u, probe.sm.smCount / 4);
  const Split split = splitSms(dev, minCount);
  std::printf("device 0: %u SMs", split.whole.sm.smCount);
#if CUDA_VERSION >= 13000  // CUDA 12.6's CUdevSmResource has smCount only
  std::printf(" (minimum partition %u SMs, co-scheduled alignment %u)", split.whole.sm.minSmPartitionSize,
              split.whole.sm.smCoscheduledAlignment);
#endif
  std::printf("\ncuDevSmResourceSplitByCount(2 groups, at least %u SMs each): %zu groups of", minCount,
              split.groups.size());
  unsigned total = split.remaining.sm.smCount;
  bool asDocumented = split.groups.size() <= 2;
  for (const CUdevResource& g : split.groups) {
    std::printf(" %u", g.sm.smCount);
    total += g.sm.smCount;
    asDocumented = asDocumented && g.sm.smCount >= minCount && g.sm.smCount == split.groups[0].sm.smCount;
#if CUDA_VERSION >= 13000
    const unsigned align = split.whole.sm.smCoscheduledAlignment;
    asDocumented = asDocumented && g.sm.smCount >= split.whole.sm.minSmPartitionSize &&
                   (!align || g.sm.smCount % align == 0);
#endif
  }
  std::printf(" SMs, %u SMs remaining\n", split.remaining.sm.smCount);
  //! [partitions]
  //! [partitions-open]
  wb::expect(asDocumented && total <= split.whole.sm.smCount,
             "equal groups of at least the minimum, no more than asked, and no SM counted twice",
             "other groups");
  if (split.groups.size() < 2) {
    std::printf("fewer than two groups: steps 8 and 9 are skipped\n");
    return parts;
  }
  parts.a = openPartition(dev, split.groups[0]);
  parts.b = openPartition(dev, split.groups[1]);
  bool matches = true;
  for (const auto& [name, p, group] :
       {std::tuple{"A", &parts.a, &split.groups[0]}, {"B", &parts.b, &split.groups[1]}}) {
    CUgreenCtx owner = nullptr;
    CU_CHECK(cuStreamGetGreenCtx(p->stream, &owner));
    std::printf("green context %s: %u SMs (cuGreenCtxGetDevResource); "
                "its stream belongs to green context %s\n", name, p->sms,
                owner == parts.a.green ? "A" : owner == parts.b.green ? "B" : "(another)");
    matches = matches && p->sms == group->sm.smCount && owner == p->green;
    loadInto(*p, k);
  }
  wb::expect(matches, "each green context with its group's SMs, and its stream in it",
             "other counts or owners");
  parts.ready = true;
  return parts;
}
//! [partitions-open]

//! [own-sms]
// where in each partition's stream, 64 blocks per SM of the partition: the SMs each used. Then the
// same kernel in the primary context: a kernel outside any partition spreads further.
void ownSms(CUdevice dev, const Kernels& k, const Partitions& parts) {
  const unsigned sms = static_cast<unsigned>(deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  wb::PinnedWords smOf(64 * size_t{sms});
  const std::set<unsigned> a = smsOf(k.where.anywhere(), parts.a.stream, 64 * parts.a.sms, smOf);
  const std::set<unsigned> b = smsOf(k.where.anywhere(), parts.b.stream, 64 * parts.b.sms, smOf);
  const std::set<unsigned> primary = smsOf(k.where.fn, nullptr, 64 * parts.a.sms, smOf);
  std::vector<unsigned> shared;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(shared));
  std::printf("where, %u blocks in partition A: %zu distinct SMs (A has %u); "
              "%u blocks in B: %zu (B has %u); SMs in both: %zu\n",
              64 * parts.a.sms, a.size(), parts.a.sms, 64 * parts.b.sms, b.size(), parts.b.sms,
              shared.size());
  std::printf("the same %u blocks in the primary context: %zu distinct SMs\n", 64 * parts.a.sms,
              primary.size());
  wb::expect(a.size() <= parts.a.sms && b.size() <= parts.b.sms && shared.empty(),
             "each partition's kernel on at most its own SMs, none shared", "more SMs, or shared ones");
  wb::expect(primary.size() > parts.a.sms, "the same kernel outside the partitions on more SMs",
             std::to_string(primary.size()) + " SMs");
}
//! [own-sms]

//! [side-by-side]
// hold fills partition A, every thread of its SMs; once every block is resident, where runs in
// partition B. It must finish while the hold still waits: B's SMs are B's own.
void sideBySide(CUdevice dev, const Kernels& k, const Partitions& parts) {
  Shape shape = fillingShape(dev, k.hold.fn);
  if (!shape.threads)
    shape = {256, static_cast<unsigned>(blocksPerSm(k.hold.fn, 256, 0))};  // not full, still many
  const unsigned blocks = shape.perSm * parts.a.sms, whereBlocks = 64 * parts.b.sms;
  wb::PinnedWords smOfWhere(whereBlocks);
  Holding hold(k.hold.anywhere(), parts.a.stream, blocks, shape.threads, 5.0);
  hold.expectResident("every block of the hold resident in partition A");
  const std::set<unsigned> b = smsOf(k.where.anywhere(), parts.b.stream, whereBlocks, smOfWhere);
  const unsigned waiting = hold.count(1);
  const std::set<unsigned> a = hold.sms();
  std::vector<unsigned> shared;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(shared));
  std::printf("hold in partition A: %u blocks of %u threads on %zu distinct SMs (A has %u)\n", blocks,
              shape.threads, a.size(), parts.a.sms);
  std::printf("where in partition B, meanwhile: %u blocks ran to the end on %zu SMs, none of A's: %s; "
              "the hold's blocks still waiting then: %u of %u\n",
              whereBlocks, b.size(), shared.empty() ? "yes" : "NO", waiting, blocks);
  wb::expect(waiting == blocks && a.size() <= parts.a.sms && shared.empty(),
             "partition B's kernel running to the end beside the full partition A",
             "it waited, or SMs were shared");
}
//! [side-by-side]
#endif  // CUDA_VERSION >= 12040

int main() {
  try {
    wb::checkEnvironment({
        {"CUDA_LAUNCH_BLOCKING", wb::Under::Stops,
         "every launch would wait for its kernel: the launch of the kernel that holds its SMs until the host opens a "
         "gate would wait for the gate, and nothing could be shown running beside it"},
        {"CUDA_DEVICE_MAX_CONNECTIONS", wb::Under::Stops,
         "kernels of two streams could share a work queue, so the kernel in one partition could wait behind the one "
         "that holds the other (the reference names these connections as what can make green contexts depend on "
         "each other)", wb::belowDefault},
    });
    // The image is checked before the driver starts: a damaged one stops the program in a moment.
    const std::string image = wb::verifiedImagePath("launch_control.fatbin");
    CU_CHECK(cuInit(0));
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxSetCurrent(primary));
    CUlibrary library = nullptr;
    CU_CHECK(cuLibraryLoadFromFile(&library, image.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    const Kernels k = Kernels::load(library);
    {
      // Before CUDA 12.4 there is no cuFuncLoad: a first launch of each kernel that steps 6 and 9
      // run beside a waiting one loads it here, before anything waits.
      wb::PinnedWords smOf(1);
      smsOf(k.where.fn, nullptr, 1, smOf);
      Holding warm(k.hold.fn, nullptr, 1, 32, 0.0);  // a deadline of 0: it ends at once
    }
    // Under compute-sanitizer (the sanitize target sets WORKBOOK_UNDER_SANITIZER), on driver 580, no
    // kernel ran beside a waiting one (lesson 09): steps 6 and 9 say so instead of narrating it.
    const auto unlessSanitized = [sanitized = wb::underSanitizer()](auto&& run) {
      if (!sanitized) return run();
      std::printf("left out under compute-sanitizer, which runs one kernel at a time\n");
    };
    {
      SumInput in(static_cast<size_t>(deviceAttribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)) / 4);
      wb::step(1, "What a kernel needs");
      kernelNeeds(dev, k);
      launchBounds(k, in);
      wb::step(2, "More than 48 KiB of dynamic shared memory");
      beyond48KiB(dev, k, in);
    }
    wb::step(3, "Occupancy: how many blocks an SM holds");
    occupancyTable(dev, k);
    potentialBlockSize(dev, k);
    availableShared(dev, k);
    wb::step(4, "Thread-block clusters");
    clusters(dev, k);
    wb::step(5, "Cooperative launch: a barrier across the grid");
    cooperative(dev, k);
    wb::step(6, "One kernel that fills the device holds up the next");
    unlessSanitized([&] { wholeDevice(dev, k); });
#if CUDA_VERSION >= 12040
    wb::step(7, "Green contexts: splitting the SMs");
    Partitions parts = makePartitions(dev, k);
    wb::step(8, "Each partition runs on its own SMs");
    const auto withPartitions = [&](auto&& run) {
      if (parts.ready) return run();
      std::printf("skipped: step 7 made no two partitions\n");
    };
    withPartitions([&] { ownSms(dev, k, parts); });
    wb::step(9, "A full partition does not hold up the other");
    withPartitions([&] { unlessSanitized([&] { sideBySide(dev, k, parts); }); });
    closePartition(parts.a);
    closePartition(parts.b);
#else
    const char* noGreen = "built with CUDA %d.%d: green contexts need a toolkit of 12.4 or newer\n";
    for (int s = 7; s <= 9; ++s) {
      wb::step(s, s == 7 ? "Green contexts: splitting the SMs"
                  : s == 8 ? "Each partition runs on its own SMs" : "A full partition does not hold up the other");
      std::printf(noGreen, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
    }
#endif
    CU_CHECK(cuLibraryUnload(library));
    CU_CHECK(cuCtxSetCurrent(nullptr));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
    return wb::kExitOk;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}
