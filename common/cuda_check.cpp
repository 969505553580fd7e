#include "cuda_check.hpp"

#include <string>
#include <utility>

namespace wb {
namespace {

struct ErrorEntry {
  int code;
  const char* name;
  const char* description;
};

// {code, name, the cuda.h comment}, generated from the toolkit this was built with.
constexpr ErrorEntry kHeaderErrors[] = {
#include "cuda_error_table.inc"
};

const ErrorEntry* headerEntry(CUresult code) {
  for (const auto& e : kHeaderErrors)
    if (e.code == static_cast<int>(code)) return &e;
  return nullptr;
}

std::string describeMessage(CUresult code, const std::string& expression, const std::string& file, int line,
                            const std::string& name, const std::string& description) {
  return file + ":" + std::to_string(line) + ": " + expression + " failed: " + name + " (" +
         std::to_string(static_cast<int>(code)) + "): " + description;
}

}  // namespace

const char* headerErrorName(CUresult code) {
  const ErrorEntry* e = headerEntry(code);
  return e ? e->name : nullptr;
}

const char* headerErrorDescription(CUresult code) {
  const ErrorEntry* e = headerEntry(code);
  return e ? e->description : nullptr;
}

std::vector<CUresult> headerErrorCodes() {
  std::vector<CUresult> codes;
  for (const auto& e : kHeaderErrors) codes.push_back(static_cast<CUresult>(e.code));
  return codes;
}

std::string errorName(CUresult code) {
  // The driver may be newer than the toolkit and know more codes, so it is asked first. It leaves
  // the pointer NULL for a code it does not know, and the stub driver fails the call outright.
  const char* name = nullptr;
  if (cuGetErrorName(code, &name) == CUDA_SUCCESS && name) return name;
  if (const char* fromHeader = headerErrorName(code)) return fromHeader;
  return "unknown CUresult";
}

std::string errorDescription(CUresult code) {
  const char* text = nullptr;
  if (cuGetErrorString(code, &text) == CUDA_SUCCESS && text) return text;
  if (const char* fromHeader = headerErrorDescription(code)) return fromHeader;
  return "code " + std::to_string(static_cast<int>(code)) + " is known neither to the driver nor to the cuda.h of CUDA " +
         std::to_string(CUDA_VERSION / 1000) + "." + std::to_string(CUDA_VERSION % 1000 / 10) +
         " this was built with";
}

DriverError::DriverError(CUresult code, std::string expression, std::string file, int line)
    : DriverError(code, std::move(expression), std::move(file), line, errorName(code), errorDescription(code)) {}

DriverError::DriverError(CUresult code, std::string expression, std::string file, int line, std::string name,
                         std::string description)
    : std::runtime_error(describeMessage(code, expression, file, line, name, description)),
      code_(code),
      name_(std::move(name)),
      description_(std::move(description)),
      expression_(std::move(expression)),
      file_(std::move(file)),
      line_(line) {}

void throwDriverError(CUresult code, const char* expression, const char* file, int line) {
  throw DriverError(code, expression, file, line);
}

}  // namespace wb
