// Lesson 30: replaying the trace through any allocator, timing each call, and reading the table
// PyTorch's side (pytorch_side.py) wrote of the same trace. Plain C++: no driver call is made here;
// main.cpp hands replay() each allocator's calls.
#pragma once

#include "trace.hpp"
#include "workbook.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace l30 {

// One allocator's run over the trace: how its reserved memory followed the live bytes, and what a call cost.
struct Replay {
  std::string way;
  std::vector<std::pair<size_t, double>> ratio;  // (events replayed, peak reserved / peak live so far)
  double allocUs = 0, freeUs = 0;
  size_t peakReserved = 0, live = 0, peakLive = 0;
};

inline double median(std::vector<double> v) {
  if (v.empty()) throw std::runtime_error("no times to take the median of");
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

using Clock = std::chrono::steady_clock;
inline double usSince(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// Replays trace events [from, to) through alloc/release (each timed) and notes, after every 500th
// event and the last, the peak reserved (reserved(), as each way reads it) over the peak live bytes.
template <typename Alloc, typename Release, typename Reserved>
void replay(const l30::Trace& t, size_t from, size_t to, std::vector<CUdeviceptr>& ptrs, Replay& r,
            std::vector<double>& allocs, std::vector<double>& frees, Alloc alloc, Release release,
            Reserved reserved) {
  for (size_t i = from; i < to; ++i) {
    const l30::Event& e = t.events[i];
    const Clock::time_point t0 = Clock::now();
    if (e.alloc) {
      ptrs[e.id] = alloc(e.bytes, e.stream);
      allocs.push_back(usSince(t0));
      r.live += e.bytes;
      r.peakLive = std::max(r.peakLive, r.live);
      r.peakReserved = std::max(r.peakReserved, reserved());
    } else {
      release(ptrs[e.id], e.stream);
      frees.push_back(usSince(t0));
      r.live -= e.bytes;
    }
    if ((i + 1) % 500 == 0 || i + 1 == t.events.size())
      r.ratio.emplace_back(i + 1, double(r.peakReserved) / double(r.peakLive));
  }
}

// PyTorch's side, from the table pytorch_side.py wrote in this recording (absent: not measured).
inline std::vector<Replay> readPyTorch(const std::string& path, const l30::Trace& t) {
  std::ifstream in(path);
  if (path.empty() || !in) return {};
  std::map<std::string, Replay> ways;
  std::vector<std::string> order;
  uint64_t events = 0, total = 0, peak = 0, checksum = 0;
  std::string line;
  std::getline(in, line);  // kind,way,x,value
  for (int row = 2; std::getline(in, line); ++row) {
    std::stringstream ss(line);
    std::string kind, way, x, value;
    std::getline(ss, kind, ','), std::getline(ss, way, ','), std::getline(ss, x, ','), std::getline(ss, value);
    try {
      if (kind == "trace") events = std::stoull(x), total = std::stoull(value);
      if (kind == "trace_peak") peak = std::stoull(value);
      if (kind == "trace_checksum") checksum = std::stoull(value);
      if (kind.rfind("trace", 0) == 0) continue;
      if (!ways.count(way)) order.push_back(way), ways[way].way = way;
      Replay& r = ways[way];
      if (kind == "ratio") r.ratio.emplace_back(std::stoull(x), std::stod(value));
      if (kind == "alloc_us") r.allocUs = std::stod(value);
      if (kind == "free_us") r.freeUs = std::stod(value);
      if (kind == "peak_reserved") r.peakReserved = std::stoull(value);
    } catch (const std::exception&) {
      throw std::runtime_error(path + " line " + std::to_string(row) + " is not kind,way,x,value: run "
                               "lessons/30-caching-allocator/pytorch_side.py again");
    }
  }
  std::printf("PyTorch's table: its trace has %llu events, %llu bytes in all, peak live %llu, checksum %016llx\n",
              static_cast<unsigned long long>(events), static_cast<unsigned long long>(total),
              static_cast<unsigned long long>(peak), static_cast<unsigned long long>(checksum));
  wb::expect(events == t.events.size() && total == t.totalBytes && peak == t.peakLive && checksum == t.checksum,
             "PyTorch's side replaying this program's trace", "a table of another trace: " + path);
  std::vector<Replay> out;
  for (const std::string& w : order) out.push_back(ways[w]);
  return out;
}

}  // namespace l30
