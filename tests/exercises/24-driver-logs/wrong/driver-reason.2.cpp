// Wrong (R3): takes the iterator after the call, so the call's own messages are behind it
//
// cuLogsCurrent "points to the end of log buffer, where the next message would be written": taken
// after the failure, the dump from it is empty. The answer is "" for a failed call:
// `got == joined(expected)` fails.
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
  result = call();
  CUlogIterator since = 0;
  const bool logged = cuLogsCurrent(&since, 0) == CUDA_SUCCESS;
  if (result == CUDA_SUCCESS || !logged) return "";
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
