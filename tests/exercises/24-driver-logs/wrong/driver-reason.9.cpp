// Wrong (R2): dumps the log whatever the call returned, and returns what it holds
//
// "A call that succeeds logs nothing, so its dump is empty anyway": one branch less. But the log is
// the process's: a call that succeeded after a refusal on its way (a fallback that worked), or
// another thread's failure in between, leaves messages behind, and a success comes back with a
// reason. In "R1 R2 R3 R5 R6: driverReason keeps every message ...", the call that refuses an
// allocation and then succeeds gets its refusal back: `none == ""` fails.
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
  const bool logged = cuLogsCurrent(&since, 0) == CUDA_SUCCESS;
  result = call();
  if (!logged) return "";
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
