// Wrong (R6): never unregisters the callback (the destructor does nothing)
//
// The constructor is where the work seems to be; but the driver keeps calling a registered callback
// with the userData it was given, here a collector that is gone. The check sees the handle still
// registered after the collector's end: `left.empty()` and `gone == made` fail.
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
}

std::vector<std::string> LogCollector::messages() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return messages_;
}

// The text is the driver's: copied, and cut at a trailing newline or NUL.
void LogCollector::add(const char* message, size_t length) {
  std::string text(message, length);
  while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) text.pop_back();
  const std::lock_guard<std::mutex> lock(mutex_);
  messages_.push_back(text);
}

}  // namespace ex24
