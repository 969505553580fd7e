// Wrong (R7): checks cuLogsCurrent with CU_CHECK, so when it fails the call never runs
//
// Every driver call is CU_CHECKed, the course says; but here cuLogsCurrent only serves the
// explanation, and the call is what the caller asked for: when the log cannot give an iterator,
// driverReason throws before running it, and the caller's allocation or launch never happens. In
// "R7: when cuLogsCurrent fails ...", `ran == 1` fails (and `threw.empty()`).
#include "exercises.hpp"

#include <vector>

namespace ex24 {

#if CUDA_VERSION >= 12090  // the log calls came with CUDA 12.9
namespace {
// A dump line without its leading bracketed fields: the message.
std::string messageOf(const std::string& line) {
  size_t at = 0;
  while (at < line.size() && line[at] == '[') {
    const size_t close = line.find(']', at);
    if (close == std::string::npos) break;
    at = close + 1;
  }
  while (at < line.size() && line[at] == ' ') ++at;
  return line.substr(at);
}
}  // namespace
#endif

// The iterator marks where the next message goes: taken just before the call, a dump from it holds
// what the call logged and nothing older. The log keeps other threads' lines too; between the two
// calls here there is only this one.
std::string driverReason(const std::function<CUresult()>& call, CUresult& result) {
#if CUDA_VERSION >= 12090
  CUlogIterator since = 0;
  CU_CHECK(cuLogsCurrent(&since, 0));
  result = call();
  if (result == CUDA_SUCCESS) return "";
  std::vector<char> buffer(25600);  // the reference's maximum
  size_t size = buffer.size();      // in: the room; out: the bytes written, without the NUL
  CU_CHECK(cuLogsDumpToMemory(&since, buffer.data(), &size, 0));
  std::string out, line;
  for (size_t i = 0; i <= size; ++i) {
    if (i < size && buffer[i] != '\n') {
      line += buffer[i];
      continue;
    }
    if (!line.empty()) out += (out.empty() ? "" : "\n") + messageOf(line);
    line.clear();
  }
  return out;
#else
  result = call();
  return "";
#endif
}

}  // namespace ex24
