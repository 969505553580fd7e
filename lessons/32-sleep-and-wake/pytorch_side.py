#!/usr/bin/env python3
"""Lesson 32's PyTorch side: the same sleep and wake, moved with PyTorch itself.

    python3 lessons/32-sleep-and-wake/pytorch_side.py build/lesson32-pytorch.csv

vLLM's sleep mode (vllm/device_allocator/cumem.py, CuMemAllocator.sleep and wake_up) is not
installed on the course's GPU machines, so this measures what PyTorch alone does with the same bytes,
on the same GPU, in the same recording as the program:

  sleep: a weights tensor of N bytes copied into a pinned host tensor (copy_ with non_blocking=True,
         then a synchronise), the weights and a cache tensor of N bytes deleted, and
         torch.cuda.empty_cache(), which gives the caching allocator's unused blocks back to the
         device (cudaFree). What it freed is read with torch.cuda.mem_get_info before and after.
  wake:  torch.empty for the weights and the cache (after empty_cache the caching allocator asks the
         device again: cudaMalloc), then copy_ from the pinned tensor with non_blocking=True, timed
         with CUDA events recorded before the allocations and after the copy (the host's wall time
         is printed beside them). The tensors come back at addresses PyTorch chooses: a CUDA graph
         captured before would have to be captured again, which is what vLLM's cumem allocator avoids.
  copy:  the pinned host-to-device copy alone, the same bytes, timed with CUDA events.

Each time is the median of 5. The table (bytes,way,GB/s of weights made usable) goes to the path
given; the program draws it beside its own series. Where torch or a GPU is missing, this says why,
writes nothing and exits 0: PyTorch is never needed to build or test the course.
"""
import statistics
import sys
import time

SIZES_MIB = (32, 128, 512)  # the program's step 6 measures the same sizes
REPEATS = 5


def gbs(nbytes, ms):
    return nbytes / (ms * 1e6)


def measure(torch, nbytes):
    dev = torch.device("cuda", 0)
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    weights = (torch.arange(nbytes, dtype=torch.int32, device=dev) % 251).to(torch.uint8)
    cache = torch.empty(nbytes, dtype=torch.uint8, device=dev)
    expected_head = weights[: 1 << 20].cpu()
    expected_tail = weights[-(1 << 20):].cpu()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    sleep_ms, wake_ms, wake_wall_ms, freed = [], [], [], []
    for _ in range(REPEATS):
        torch.cuda.synchronize()
        free_before = torch.cuda.mem_get_info()[0]
        start.record()
        host.copy_(weights, non_blocking=True)
        stop.record()
        stop.synchronize()
        del weights, cache
        torch.cuda.empty_cache()
        sleep_ms.append(start.elapsed_time(stop))
        freed.append(torch.cuda.mem_get_info()[0] - free_before)

        wall = time.perf_counter()
        start.record()
        weights = torch.empty(nbytes, dtype=torch.uint8, device=dev)
        cache = torch.empty(nbytes, dtype=torch.uint8, device=dev)
        weights.copy_(host, non_blocking=True)
        stop.record()
        stop.synchronize()
        wake_wall_ms.append((time.perf_counter() - wall) * 1e3)
        wake_ms.append(start.elapsed_time(stop))
    right = torch.equal(weights[: 1 << 20].cpu(), expected_head) and torch.equal(
        weights[-(1 << 20):].cpu(), expected_tail)
    copy_ms = []
    for _ in range(REPEATS):
        start.record()
        weights.copy_(host, non_blocking=True)
        stop.record()
        stop.synchronize()
        copy_ms.append(start.elapsed_time(stop))
    del weights, cache, host
    torch.cuda.empty_cache()
    return {
        "sleep": statistics.median(sleep_ms),
        "wake": statistics.median(wake_ms),
        "wake_wall": statistics.median(wake_wall_ms),
        "copy": statistics.median(copy_ms),
        "freed": statistics.median(freed),
        "right": right,
    }


def main():
    if len(sys.argv) != 2:
        print("usage: pytorch_side.py <table.csv>", file=sys.stderr)
        return 2
    path = sys.argv[1]
    try:
        import torch
    except ImportError as error:
        print(f"PyTorch is not installed here ({error}): nothing measured, no table written")
        return 0
    if not torch.cuda.is_available():
        print(f"PyTorch {torch.__version__} sees no CUDA device: nothing measured, no table written")
        return 0
    print(f"PyTorch {torch.__version__} (built for CUDA {torch.version.cuda}) on {torch.cuda.get_device_name(0)}")
    rows = []
    for mib in SIZES_MIB:
        nbytes = mib << 20
        m = measure(torch, nbytes)
        if not m["right"]:
            print(f"{mib} MiB: the weights did not come back whole: no table written")
            return 1
        print(f"{mib:4d} MiB weights + {mib} MiB cache: sleep (copy to pinned, del, empty_cache) {m['sleep']:.2f} ms "
              f"on the GPU's clock, freed {m['freed'] / (2 * nbytes) * 100:.2f}% of the two tensors' bytes; "
              f"wake (torch.empty x2 + copy_ from pinned) {m['wake']:.2f} ms by events, {m['wake_wall']:.2f} ms "
              f"on the host's clock; pinned copy alone {m['copy']:.2f} ms")
        rows.append(f"{nbytes},PyTorch: empty + copy_ from pinned (after empty_cache),{gbs(nbytes, m['wake']):.2f}")
        rows.append(f"{nbytes},PyTorch: pinned copy alone (copy_ non_blocking),{gbs(nbytes, m['copy']):.2f}")
    with open(path, "w") as table:
        table.write("bytes,way,GB/s of weights made usable\n")
        table.write("\n".join(rows) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
