// Wrong (R3): keeps each message as the callback hands it, length characters and all
//
// std::string(message, length) is "a std::string of length characters", which looks like the whole
// task; but a length that counts the NUL keeps the NUL inside the string, and a message that ends in
// a newline keeps it, so every line the service writes ends in a blank one or a stray byte. In "R3:
// add keeps length characters ...", `last == expected` fails.
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
  return messages_;
}

// The text is the driver's: copied, and cut at a trailing newline or NUL.
void LogCollector::add(const char* message, size_t length) {
  std::string text(message, length);
  const std::lock_guard<std::mutex> lock(mutex_);
  messages_.push_back(text);
}

}  // namespace ex24
