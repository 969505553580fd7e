// A graph and an executable graph a test owns: each destroyed at scope exit if it was made, so a
// failed assertion or a thrown error leaves neither behind. Lessons 20 and 27-29's suites and
// exercise checks build graphs this way.
#pragma once

#include "workbook.hpp"

namespace wbt {

struct Graph {
  CUgraph g = nullptr;  // set by the capture or cuGraphCreate that makes it
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() {
    if (g) cuGraphDestroy(g);
  }
};

struct Exec {
  CUgraphExec e = nullptr;
  Exec() = default;
  explicit Exec(CUgraph g) { CU_CHECK(cuGraphInstantiate(&e, g, 0)); }
  Exec(const Exec&) = delete;
  Exec& operator=(const Exec&) = delete;
  ~Exec() {
    if (e) cuGraphExecDestroy(e);
  }
};

}  // namespace wbt
