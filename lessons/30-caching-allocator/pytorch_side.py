#!/usr/bin/env python3
"""Lesson 30's PyTorch side: PyTorch's caching allocator replaying the lesson's allocation trace.

    python3 lessons/30-caching-allocator/pytorch_side.py <table.csv>

The trace is the rule written in trace.hpp beside this file, implemented again here; both sides
print its event count, total bytes, peak live bytes and checksum, and the program refuses a table
whose trace differs from its own. Each configuration runs in a child process of its own, because
PyTorch reads PYTORCH_CUDA_ALLOC_CONF once, at the first CUDA use: the default, and
expandable_segments:True. Each child replays the trace (torch.empty of uint8 on the trace's stream;
a free drops the last reference) and reports, at the same checkpoints as the program,
torch.cuda.max_memory_reserved() over the trace's peak live bytes, and the median time of an
allocation and of a free as Python sees it (Python included). Where torch does not import or sees
no GPU, it says why and exits 0 without writing the table.
"""
import os
import statistics
import subprocess
import sys
import time

SEED = 30
STEPS = 1000
STREAMS = 3
MIB = 1 << 20
MASK = (1 << 64) - 1
CHECK_EVERY = 500  # a checkpoint after every 500th event, and after the last


class Rng:
    def __init__(self):
        self.state = SEED

    def next(self):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) & MASK
        return self.state >> 33

    def pick(self, lo, hi):
        return lo + self.next() % (hi - lo + 1)


def make_trace():
    """The events (alloc, id, bytes, stream), as trace.hpp's makeTrace makes them."""
    rng = Rng()
    events, size_of, stream_of = [], [], []

    def alloc(nbytes, stream):
        i = len(size_of)
        size_of.append(nbytes)
        stream_of.append(stream)
        events.append((True, i, nbytes, stream))
        return i

    def release(i):
        events.append((False, i, size_of[i], stream_of[i]))

    kv_per_token = 128 * 1024
    weights = [alloc(rng.pick(16 * MIB, 48 * MIB) // 256 * 256, 0) for _ in range(64)]
    active = []  # [cache id, tokens, capacity, target]
    for step in range(STEPS):
        s = step % STREAMS
        prompt = 0
        if len(active) < 8 and rng.next() % 3 == 0:
            prompt = rng.pick(64, 1024)
            target = prompt + rng.pick(64, 1536)
            capacity = (prompt + 255) // 256 * 256
            active.append([alloc(capacity * kv_per_token, s), prompt, capacity, target])
        batch_tokens = max(1, prompt + len(active))  # an idle step pads to 1
        acts = []
        for i in range(6):
            acts.append(alloc(batch_tokens * rng.pick(4, 28) * 2048, s))
            if i >= 2:
                release(acts[i - 2])
        release(acts[4])
        release(acts[5])
        still = []
        for r in active:
            r[1] += 1
            if r[1] > r[2]:
                r[2] += 256
                grown = alloc(r[2] * kv_per_token, s)
                release(r[0])
                r[0] = grown
            if r[1] >= r[3]:
                release(r[0])
            else:
                still.append(r)
        active = still
    for r in active:
        release(r[0])
    for w in weights:
        release(w)
    return events


def stats(events):
    live = peak = total = 0
    checksum = 1469598103934665603
    for is_alloc, _, nbytes, stream in events:
        if is_alloc:
            live += nbytes
            total += nbytes
            peak = max(peak, live)
        else:
            live -= nbytes
        checksum = ((checksum ^ ((nbytes * 8 + stream * 2 + (1 if is_alloc else 0)) & MASK)) * 1099511628211) & MASK
    return total, peak, checksum


def child(way):
    """Replays the trace in this process; prints ROW lines (kind,way,x,value)."""
    try:
        import torch
    except ImportError as e:
        print(f"torch does not import: {e}")
        return 3
    if not torch.cuda.is_available():
        print("torch sees no CUDA device")
        return 3
    events = make_trace()
    _, peak_live, _ = stats(events)
    torch.cuda.init()
    streams = [torch.cuda.Stream() for _ in range(STREAMS)]
    warm = torch.empty(1, dtype=torch.uint8, device="cuda")
    del warm
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    live, alloc_ns, free_ns, live_bytes, peak_so_far = {}, [], [], 0, 0
    clock = time.perf_counter_ns
    for n, (is_alloc, i, nbytes, s) in enumerate(events, start=1):
        if is_alloc:
            with torch.cuda.stream(streams[s]):
                t0 = clock()
                t = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
                alloc_ns.append(clock() - t0)
            live[i] = t
            del t
            live_bytes += nbytes
            peak_so_far = max(peak_so_far, live_bytes)
        else:
            t = live.pop(i)
            t0 = clock()
            del t
            free_ns.append(clock() - t0)
            live_bytes -= nbytes
        if n % CHECK_EVERY == 0 or n == len(events):
            ratio = torch.cuda.max_memory_reserved() / peak_so_far
            print(f"ROW,ratio,{way},{n},{ratio:.4f}")
    torch.cuda.synchronize()
    print(f"ROW,alloc_us,{way},0,{statistics.median(alloc_ns) / 1000:.3f}")
    print(f"ROW,free_us,{way},0,{statistics.median(free_ns) / 1000:.3f}")
    print(f"ROW,peak_reserved,{way},0,{torch.cuda.max_memory_reserved()}")
    print(f"ROW,peak_allocated,{way},0,{torch.cuda.max_memory_allocated()}")
    print(f"{way}: torch {torch.__version__} on {torch.cuda.get_device_name(0)}; peak reserved "
          f"{torch.cuda.max_memory_reserved() / MIB:.0f} MiB, peak allocated {torch.cuda.max_memory_allocated() / MIB:.0f} MiB, "
          f"the trace's peak live {peak_live / MIB:.0f} MiB")
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        return child(sys.argv[2])
    if len(sys.argv) != 2:
        print(__doc__)
        return 64
    table = sys.argv[1]
    events = make_trace()
    total, peak, checksum = stats(events)
    print(f"trace: {len(events)} events, {total} bytes allocated in all, peak live {peak} bytes, checksum {checksum:016x}")
    rows = [f"trace,trace,{len(events)},{total}", f"trace_peak,trace,0,{peak}", f"trace_checksum,trace,0,{checksum}"]
    ways = [("PyTorch default", None), ("PyTorch expandable_segments", "expandable_segments:True")]
    for way, conf in ways:
        env = dict(os.environ)
        env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
        if conf:
            env["PYTORCH_CUDA_ALLOC_CONF"] = conf
        try:
            done = subprocess.run([sys.executable, __file__, "--child", way], env=env, capture_output=True,
                                  text=True, timeout=240)
        except subprocess.TimeoutExpired:
            print(f"{way}: the replay did not end within 240 s; no table written")
            return 0
        for line in done.stdout.splitlines():
            if line.startswith("ROW,"):
                rows.append(line[4:])
            else:
                print(line)
        if done.returncode != 0:
            print(done.stderr.strip()[-2000:])
            print(f"{way}: the child ended with exit code {done.returncode}; PyTorch not measured, no table written")
            return 0
    with open(table, "w") as f:
        f.write("kind,way,x,value\n")
        for row in rows:
            f.write(row + "\n")
    print(f"wrote {table} ({len(rows)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
