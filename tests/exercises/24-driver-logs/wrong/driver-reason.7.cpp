// Wrong (R6): collects the messages with a callback registered on every call and never unregistered
//
// Step 1 of the lesson gets the messages through a callback, so a learner registers one around the
// call; forgetting cuLogsUnregisterCallback leaves one more callback per call, each called for
// every later failure of the process, for good. The task says to register none:
// `wbx::calls("cuLogsRegisterCallback") == registersBefore` fails.
#include "exercises.hpp"

#include <mutex>
#include <vector>

namespace ex24 {

#if CUDA_VERSION >= 12090
namespace {
std::mutex mutex;
std::vector<std::string> received;  // what the callbacks collect

void CUDA_CB collect(void*, CUlogLevel, char* message, size_t length) {
  std::string text(message, length);
  while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) text.pop_back();
  const std::lock_guard<std::mutex> lock(mutex);
  received.push_back(text);
}
}  // namespace
#endif

std::string driverReason(const std::function<CUresult()>& call, CUresult& result) {
#if CUDA_VERSION >= 12090
  {
    const std::lock_guard<std::mutex> lock(mutex);
    received.clear();
  }
  CUlogsCallbackHandle handle = nullptr;
  const bool logged = cuLogsRegisterCallback(collect, nullptr, &handle) == CUDA_SUCCESS;
  result = call();
  if (result == CUDA_SUCCESS || !logged) return "";
  const std::lock_guard<std::mutex> lock(mutex);
  std::string out;
  for (const std::string& m : received) out += (out.empty() ? "" : "\n") + m;
  return out;
#else
  result = call();
  return "";
#endif
}

}  // namespace ex24
