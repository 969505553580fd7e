#include "workbook.hpp"

#include <cstdio>
#include <cstdlib>

namespace wb {

void step(int number, const char* title) { std::printf("\n=== %d. %s\n", number, title); }

Contradiction::Contradiction(const std::string& what, const std::string& instead)
    : std::runtime_error("this run did not show " + what + ": " + instead) {}

void expect(bool shown, const std::string& what, const std::string& instead) {
  if (!shown) throw Contradiction(what, instead);
}

bool underSanitizer() { return std::getenv("WORKBOOK_UNDER_SANITIZER") != nullptr; }

int reportFatal(const DriverError& error) {
  std::fflush(stdout);  // what the lesson printed so far comes before the error, also in a log
  std::fprintf(stderr, "error: %s\n", error.what());
  // On the code as a number: a case for a code this toolkit's header does not name (below) is then
  // no value outside the enumeration, which Clang's -Wswitch refuses.
  switch (static_cast<int>(error.code())) {
    case CUDA_ERROR_STUB_LIBRARY:
      std::fprintf(stderr,
                   "The libcuda.so.1 this program loaded is the CUDA toolkit's stub library, not a driver.\n"
                   "What to do: install the NVIDIA driver, and keep the toolkit's stubs/ folder off "
                   "LD_LIBRARY_PATH.\n");
      return kExitNoGpu;
    case CUDA_ERROR_NO_DEVICE: {
      const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
      std::fprintf(stderr,
                   "The driver is loaded but sees no CUDA device%s%s%s.\n"
                   "What to do: check that nvidia-smi lists a GPU and that CUDA_VISIBLE_DEVICES names it.\n",
                   visible ? " (CUDA_VISIBLE_DEVICES is '" : "", visible ? visible : "", visible ? "')" : "");
      return kExitNoGpu;
    }
    // CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER (36) is declared from CUDA 13.0's header on; CUDA 12.6's
    // header lacks the name, but a newer driver can still return the code.
#if CUDA_VERSION >= 13000
    case CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER:
#else
    case 36:
#endif
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
      std::fprintf(stderr,
                   "The installed driver does not match this program (built with CUDA %d.%d).\n"
                   "What to do: update the NVIDIA driver, or build with the toolkit the driver supports.\n",
                   CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
      return kExitNoGpu;
    default:
      std::fprintf(stderr, "The call above failed; its name and description say why.\n");
      return kExitDriverError;
  }
}

int reportFatal(const ImageError& error) {
  std::fflush(stdout);
  std::fprintf(stderr, "error: kernel image %s\n", error.what());
  return kExitBadImage;
}

int reportFatal(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const DriverError& e) {
    return reportFatal(e);
  } catch (const ImageError& e) {
    return reportFatal(e);
  } catch (const EnvironmentError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitEnvironment;
  } catch (const Contradiction& e) {
    std::fflush(stdout);
    std::fprintf(stderr,
                 "%s\nThe page explains what NVIDIA documents (or what one driver did, where it says so); this "
                 "run showed otherwise.\nWhat to do: check the environment notes above, other processes on the "
                 "GPU and the driver version; the lesson's page says what it expects.\n",
                 e.what());
    return kExitContradicted;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitDriverError;
  } catch (...) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: an exception that is not a std::exception ended the program\n");
    return kExitDriverError;
  }
}

}  // namespace wb
