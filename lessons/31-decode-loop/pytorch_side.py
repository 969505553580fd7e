#!/usr/bin/env python3
"""Lesson 31's PyTorch side: a decode-shaped chain of tiny kernels, launched eagerly and replayed
as a torch.cuda.graph, on the same GPU as the program.

    python3 lessons/31-decode-loop/pytorch_side.py <table.csv>

A step of K kernels is K - 1 operations torch.add(pos, src, alpha=0.5, out=dst) on 1024 floats,
ping-ponging between two buffers as the program's decode_op does (dst = src * 0.5 + pos, one
elementwise kernel each), where pos is a one-element tensor on the GPU, and pos.add_(1), the step's
last kernel, which advances the position in device memory as the program's way 5 does. A graph
replay can change nothing but device memory, so this is PyTorch's equivalent of that way. K is 8,
16, 32 and 64, as in the program. For each: microseconds per step over 128 steps (wall clock, the
host queueing the steps and one synchronize at the end), median of 3 rounds, eagerly and as
g.replay(). A profiler count of the kernels in one eager step is printed where the profiler works.
Where torch does not import or sees no GPU, it says why and exits 0 without writing the table.
"""
import statistics
import sys
import time

STEPS = 128
ROUNDS = 3
N = 1024
LENGTHS = (8, 16, 32, 64)


def main():
    if len(sys.argv) != 2:
        print("usage: pytorch_side.py <table.csv>")
        return 64
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means: not measured
        print(f"PyTorch not measured: torch does not import here ({e})")
        return 0
    if not torch.cuda.is_available():
        print("PyTorch not measured: torch sees no CUDA device here")
        return 0
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name(0)}")
    a = torch.zeros(N, device="cuda")
    b = torch.zeros(N, device="cuda")
    pos = torch.zeros((), device="cuda")

    def make_step(kernels):
        def step():
            src, dst = a, b
            for _ in range(kernels - 1):
                torch.add(pos, src, alpha=0.5, out=dst)
                src, dst = dst, src
            pos.add_(1)
        return step

    def per_step(run):
        times = []
        for _ in range(ROUNDS):
            pos.zero_()
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(STEPS):
                run()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1e6 / STEPS)
        if int(pos.item()) != STEPS:
            raise RuntimeError(f"the position is {pos.item()} after {STEPS} steps")
        return statistics.median(times)

    rows = []
    for kernels in LENGTHS:
        step = make_step(kernels)
        side = torch.cuda.Stream()  # warm-up on a side stream, as torch.cuda.graph's documentation does
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step()
        eager = per_step(step)
        replay = per_step(graph.replay)
        rows.append((kernels, "PyTorch eager launch", eager))
        rows.append((kernels, "PyTorch torch.cuda.graph replay", replay))
        print(f"{kernels:3d} kernels a step: eager {eager:8.1f} us, graph replay {replay:8.1f} us a step")
        if kernels == 32:
            try:
                from torch.profiler import ProfilerActivity, profile
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    step()
                    torch.cuda.synchronize()
                names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
                print(f"the profiler saw {len(names)} GPU activities in one eager step of 32")
            except Exception as e:  # noqa: BLE001 - the count is shown where the profiler works
                print(f"no profiler count: {e}")
        del graph
    with open(sys.argv[1], "w") as out:
        out.write("kernels per step,way,microseconds per step\n")
        for kernels, way, us in rows:
            out.write(f"{kernels},{way},{us:.2f}\n")
    print(f"wrote {sys.argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
