// The exercises of lesson 24 (driver logs): their tasks are in exercises.cpp beside this
// file, their checks in tests/exercises/exercise24_driver_logs.cpp.
#pragma once

#include "workbook.hpp"

#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace ex24 {

// Exercise 1: calls call once and returns the driver's messages logged from the call on ("" when it succeeded).
std::string driverReason(const std::function<CUresult()>& call, CUresult& result);

// Exercise 2: every message the driver logs while it lives, received through a callback.
class LogCollector {
 public:
  LogCollector();   // registers the callback; throws when the driver refuses
  ~LogCollector();  // unregisters it
  LogCollector(const LogCollector&) = delete;
  LogCollector& operator=(const LogCollector&) = delete;

  // Every message received so far, oldest first.
  std::vector<std::string> messages() const;
  // What your callback calls with the message it received: keeps one message.
  void add(const char* message, size_t length);

 private:
  // State you will need (change it as you like). handle_ holds the CUlogsCallbackHandle (CUDA 12.9).
  void* handle_ = nullptr;
  mutable std::mutex mutex_;
  std::vector<std::string> messages_;
};

// Exercise 3: makes the printf FIFO of context hold at least lines * bytesPerLine bytes; returns its size.
size_t ensurePrintfRoom(CUcontext context, size_t lines, size_t bytesPerLine);

}  // namespace ex24
