// The allocation trace of lesson 30: one written rule, which this header and pytorch_side.py both
// implement, so the course's allocators and PyTorch's replay the same events. Both print the
// trace's event count, total bytes, peak live bytes and checksum; the program compares them.
//
// The rule. A 64-bit linear congruential generator, state = state * 6364136223846793005 +
// 1442695040888963407 (mod 2^64), starting at kSeed; next() advances it and returns state >> 33;
// pick(lo, hi) is lo + next() % (hi - lo + 1). Three streams. Sizes in bytes.
//   1. Weights, on stream 0: 64 tensors, each pick(16 MiB, 48 MiB) rounded down to 256 bytes.
//   2. kSteps steps; step k runs on stream k % 3. In each:
//      a. a request arrives when fewer than 8 are active and next() % 3 == 0: its prompt is
//         pick(64, 1024) tokens, its target length prompt + pick(64, 1536); its KV cache is
//         allocated for the prompt rounded up to 256 tokens, 128 KiB a token;
//      b. activations: batch tokens = the arriving prompt (or 0) + the active requests, at least 1; six
//         tensors of batch tokens * pick(4, 28) * 2 KiB each; after the i-th (i >= 2) the
//         (i-2)-th is freed, and the last two at the end of the step;
//      c. each active request (in arrival order) grows by a token: past its cache's capacity the
//         cache is allocated again 256 tokens larger and the old one freed; at its target length
//         its cache is freed and it leaves.
//   3. The server drains: every remaining cache is freed (the trace's idle point), then every
//      weight, in allocation order.
// A free names the stream its allocation was made on (a block goes back to its own stream).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace l30 {

constexpr uint64_t kSeed = 30;
constexpr int kSteps = 1000, kStreams = 3;
constexpr size_t kMiB = size_t{1} << 20;

struct Event {
  bool alloc;      // an allocation, or a free of allocation `id`
  uint32_t id;     // allocations are numbered from 0 in the order they are made
  uint64_t bytes;  // what was asked (for a free: what its allocation asked)
  int stream;      // 0..kStreams-1
};

struct Trace {
  std::vector<Event> events;
  size_t idleAt = 0;  // the first event after the server drained: only the weights live there
  uint64_t totalBytes = 0, peakLive = 0, checksum = 0;
  size_t allocations = 0;
};

//! [trace-rule]
class Rng {
 public:
  uint64_t next() {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;  // wraps mod 2^64
    return state_ >> 33;
  }
  uint64_t pick(uint64_t lo, uint64_t hi) { return lo + next() % (hi - lo + 1); }

 private:
  uint64_t state_ = kSeed;
};
//! [trace-rule]

inline Trace makeTrace() {
  Trace t;
  Rng rng;
  std::vector<uint64_t> sizeOf;
  std::vector<int> streamOf;
  auto alloc = [&](uint64_t bytes, int stream) {
    const uint32_t id = static_cast<uint32_t>(sizeOf.size());
    sizeOf.push_back(bytes);
    streamOf.push_back(stream);
    t.events.push_back({true, id, bytes, stream});
    return id;
  };
  auto release = [&](uint32_t id) { t.events.push_back({false, id, sizeOf[id], streamOf[id]}); };
  struct Request {
    uint32_t cache;
    uint64_t tokens, capacity, target;
  };
  const uint64_t kvPerToken = 128 * 1024;
  std::vector<uint32_t> weights;
  for (int i = 0; i < 64; ++i) weights.push_back(alloc(rng.pick(16 * kMiB, 48 * kMiB) / 256 * 256, 0));
  std::vector<Request> active;
  for (int step = 0; step < kSteps; ++step) {
    const int s = step % kStreams;
    uint64_t prompt = 0;
    if (active.size() < 8 && rng.next() % 3 == 0) {
      prompt = rng.pick(64, 1024);
      const uint64_t target = prompt + rng.pick(64, 1536), capacity = (prompt + 255) / 256 * 256;
      active.push_back({alloc(capacity * kvPerToken, s), prompt, capacity, target});
    }
    const uint64_t batchTokens = std::max<uint64_t>(1, prompt + active.size());  // an idle step pads to 1
    std::vector<uint32_t> acts;
    for (int i = 0; i < 6; ++i) {
      acts.push_back(alloc(batchTokens * rng.pick(4, 28) * 2048, s));
      if (i >= 2) release(acts[i - 2]);
    }
    release(acts[4]);
    release(acts[5]);
    std::vector<Request> still;
    for (Request r : active) {
      if (++r.tokens > r.capacity) {
        r.capacity += 256;
        const uint32_t grown = alloc(r.capacity * kvPerToken, s);
        release(r.cache);
        r.cache = grown;
      }
      if (r.tokens >= r.target) {
        release(r.cache);
      } else {
        still.push_back(r);
      }
    }
    active = still;
  }
  for (const Request& r : active) release(r.cache);
  t.idleAt = t.events.size();
  for (uint32_t w : weights) release(w);
  // The statistics both sides print: what was asked in all, the most that was live at once, and a
  // checksum of every event (an FNV-1a-like mix of kind, size and stream).
  uint64_t live = 0;
  t.checksum = 1469598103934665603ull;
  for (const Event& e : t.events) {
    if (e.alloc) {
      live += e.bytes, t.totalBytes += e.bytes, ++t.allocations;
      if (live > t.peakLive) t.peakLive = live;
    } else {
      live -= e.bytes;
    }
    t.checksum = (t.checksum ^ (e.bytes * 8 + uint64_t(e.stream) * 2 + (e.alloc ? 1 : 0))) * 1099511628211ull;
  }
  return t;
}

}  // namespace l30
