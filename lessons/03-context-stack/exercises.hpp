// The exercises of lesson 03 (the context stack): their tasks are in exercises.cpp beside this
// file, their checks in tests/exercises/exercise03_context_stack.cpp.
#pragma once

#include "workbook.hpp"

#include <functional>

namespace ex03 {

// Exercise 1: runs work with ctx current and leaves the thread's stack as it found it, whether work returns or throws.
void withContext(CUcontext ctx, const std::function<void()>& work);

// Exercise 2: runs job on a new thread with ctx current there, waits for it, and rethrows what it threw.
void runInThread(CUcontext ctx, const std::function<void()>& job);

// Exercise 3: runs work in a context of its own on dev, then gives back all of it, whether work returns or throws.
void withPrivateContext(CUdevice dev, const std::function<void()>& work);

}  // namespace ex03
