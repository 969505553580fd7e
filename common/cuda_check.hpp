// The checked call: every Driver API call in the course goes through CU_CHECK.
//
//   CU_CHECK(cuInit(0));
//
// evaluates its expression exactly once. On anything but CUDA_SUCCESS it throws wb::DriverError,
// which carries the numeric CUresult, its name, its description, the expression's text, and the
// file and line of the call. what() reads
//
//   lessons/01-init/main.cpp:42: cuInit(0) failed: CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected
//
// The name is known even when the driver cannot give it: the toolkit's stub libcuda answers every
// call, cuGetErrorName included, with CUDA_ERROR_STUB_LIBRARY. The fallback is a table generated at
// configure time from the toolkit's own cuda.h (cmake/WorkbookErrorTable.cmake), so a code the
// toolkit knows is always named, and a code nobody knows is still reported by its number.
#pragma once

#include <cuda.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace wb {

class DriverError : public std::runtime_error {
 public:
  DriverError(CUresult code, std::string expression, std::string file, int line);

  CUresult code() const noexcept { return code_; }
  const std::string& name() const noexcept { return name_; }
  const std::string& description() const noexcept { return description_; }
  const std::string& expression() const noexcept { return expression_; }
  const std::string& file() const noexcept { return file_; }
  int line() const noexcept { return line_; }

 private:
  DriverError(CUresult code, std::string expression, std::string file, int line, std::string name,
              std::string description);

  CUresult code_;
  std::string name_, description_, expression_, file_;
  int line_;
};

// The enumerator's name ("CUDA_ERROR_INVALID_VALUE"): from the driver, else from the toolkit's
// cuda.h, else "unknown CUresult".
std::string errorName(CUresult code);
// What the code means: from the driver, else the cuda.h comment for it, else a sentence saying
// that neither the driver nor the toolkit knows the code.
std::string errorDescription(CUresult code);
// The same two, from the toolkit's cuda.h table only (nullptr for a code the toolkit lacks).
const char* headerErrorName(CUresult code);
const char* headerErrorDescription(CUresult code);
// Every code the toolkit's cuda.h declares, in header order.
std::vector<CUresult> headerErrorCodes();

[[noreturn]] void throwDriverError(CUresult code, const char* expression, const char* file, int line);

}  // namespace wb

// One macro, so that the expression's text, the file and the line are captured at the call.
#define CU_CHECK(expr)                                                                  \
  do {                                                                                  \
    const CUresult wb_check_result_ = (expr);                                           \
    if (wb_check_result_ != CUDA_SUCCESS)                                               \
      ::wb::throwDriverError(wb_check_result_, #expr, __FILE__, __LINE__);              \
  } while (0)
