// Wrong (R1): keeps the messages in one static vector, which every collector shares
//
// A callback is a plain function, and a static vector is the first place it can reach without
// userData; but then every collector holds every message any collector ever received. A collector
// made after another is gone starts with the other's: `second.messages() == expected` fails.
// The collector's own members go unused here, which Clang warns about (warnings are errors in CI).
#ifdef __clang__
#pragma clang diagnostic ignored "-Wunused-private-field"
#endif
#include "exercises.hpp"

namespace ex24 {

namespace {
std::mutex everyMutex;
std::vector<std::string> every;  // what all collectors received
}  // namespace

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
  const std::lock_guard<std::mutex> lock(everyMutex);
  return every;
}

// The text is the driver's: copied, and cut at a trailing newline or NUL.
void LogCollector::add(const char* message, size_t length) {
  std::string text(message, length);
  while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) text.pop_back();
  const std::lock_guard<std::mutex> lock(everyMutex);
  every.push_back(text);
}

}  // namespace ex24
