// The exercises of lesson 04 (the primary context): their tasks are in exercises.cpp beside this
// file, their checks in tests/exercises/exercise04_primary_context.cpp.
#pragma once

#include "workbook.hpp"

#include <cstddef>

namespace ex04 {

// Exercise 1: owns one retain of a device's primary context; a copy owns one more, a move hands its retain over.
class PrimaryContext {
 public:
  explicit PrimaryContext(CUdevice dev);
  ~PrimaryContext();
  PrimaryContext(const PrimaryContext& other);
  PrimaryContext& operator=(const PrimaryContext& other);
  PrimaryContext(PrimaryContext&& other) noexcept;
  PrimaryContext& operator=(PrimaryContext&& other) noexcept;
  CUcontext get() const;    // the primary context, or nullptr once moved from
  CUdevice device() const;  // the device whose primary context it is

 private:
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;  // nullptr: holds no retain
};

// Exercise 2: bytes of device memory in dev's primary context, from any thread, leaving its context stack as it was.
CUdeviceptr allocateInPrimary(CUdevice dev, size_t bytes);

}  // namespace ex04
