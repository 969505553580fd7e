// The exercises of lesson 02 (check macro): their tasks are in exercises.cpp beside this file,
// their checks in tests/exercises/exercise02_check_macro.cpp.
#pragma once

#include "workbook.hpp"

#include <cstddef>
#include <functional>

namespace ex02 {

// Exercise 1: rc when it is CUDA_SUCCESS or allowed; any other code throws wb::DriverError naming call, file and line.
CUresult checkAllowing(CUresult rc, CUresult allowed, const char* call, const char* file, int line);

// Exercise 2: runs body and returns its failure as a CUresult and a message in a C buffer; never throws.
CUresult callGuarded(const std::function<void()>& body, char* message, size_t capacity);

}  // namespace ex02

// CU_CHECK for a call with one expected code, which it returns instead of throwing:
//   while (EX02_CHECK_ALLOWING(cuStreamQuery(s), CUDA_ERROR_NOT_READY) == CUDA_ERROR_NOT_READY) doOtherWork();
// It evaluates expr once and passes its text, file and line to ex02::checkAllowing (exercise 1).
#define EX02_CHECK_ALLOWING(expr, allowed) ::ex02::checkAllowing((expr), (allowed), #expr, __FILE__, __LINE__)
