// Wrong (R4): keeps each line as the dump has it, with its [time][thread][source][severity] fields
//
// The dump's lines are readable as they are, and a log would keep them whole; but the task asks
// for the messages alone (a log line has its own time and thread). `got == joined(expected)` fails.
#include "exercises.hpp"

#include <vector>

namespace ex24 {

// The iterator marks where the next message goes: taken just before the call, a dump from it holds
// what the call logged and nothing older. The log keeps other threads' lines too; between the two
// calls here there is only this one.
std::string driverReason(const std::function<CUresult()>& call, CUresult& result) {
#if CUDA_VERSION >= 12090
  CUlogIterator since = 0;
  const bool logged = cuLogsCurrent(&since, 0) == CUDA_SUCCESS;
  result = call();
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
    if (!line.empty()) out += (out.empty() ? "" : "\n") + line;
    line.clear();
  }
  return out;
#else
  result = call();
  return "";
#endif
}

}  // namespace ex24
