// Wrong (R5): messages() hands the messages over and empties the collector
//
// Returning what arrived since the last call looks like what a log pump wants; but the task says
// messages() keeps them, so asking twice gives the same. `collector.messages() == got` fails.
#include "exercises.hpp"

namespace ex24 {

#if CUDA_VERSION >= 12090
namespace {
// userData is the collector that registered: each one gets its own messages.
void CUDA_CB receive(void* data, CUlogLevel, char* message, size_t length) {
  static_cast<LogCollector*>(data)->add(message, length);
}
}  // namespace
#endif

LogCollector::LogCollector() {
#if CUDA_VERSION >= 12090
  CUlogsCallbackHandle handle = nullptr;
  CU_CHECK(cuLogsRegisterCallback(receive, this, &handle));
  handle_ = handle;
#else
  handle_ = nullptr;
  throw std::runtime_error("error log management needs CUDA 12.9");
#endif
}

// Unregistered with the handle registration gave: after this, no message reaches the gone collector.
LogCollector::~LogCollector() {
#if CUDA_VERSION >= 12090
  if (handle_) cuLogsUnregisterCallback(static_cast<CUlogsCallbackHandle>(handle_));
#endif
}

std::vector<std::string> LogCollector::messages() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> taken;
  taken.swap(const_cast<std::vector<std::string>&>(messages_));
  return taken;
}

// The text is the driver's: copied, and cut at a trailing newline or NUL.
void LogCollector::add(const char* message, size_t length) {
  std::string text(message, length);
  while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) text.pop_back();
  const std::lock_guard<std::mutex> lock(mutex_);
  messages_.push_back(text);
}

}  // namespace ex24
