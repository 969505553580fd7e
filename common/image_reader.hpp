// The one way the course gets a kernel image: checked before the driver sees a byte of it.
//
// The driver trusts the sizes written inside an image. Handed a fatbin cut short it may return an
// error, return success and fail later, hang, or kill the process (DESIGN.md, "Damaged images";
// lesson 06's page). So every lesson and test asks this reader for an image, as a verified path
// (for cuModuleLoad and cuLibraryLoadFromFile) or as verified bytes (for the ...LoadData calls):
//
//   fatbin  magic 0xBA55ED50, a header that fits, the total size it claims equal to the file's,
//           and every entry inside that total
//   cubin   a 64-bit little-endian ELF for EM_CUDA (190), its section and program header tables
//           and every section's bytes inside the file
//   PTX     text (no NUL byte) with a .version and a .target directive
//
// A failure throws wb::ImageError, whose message names the file, the folder, where the folder came
// from (the build or CUDA_WORKBOOK_KERNEL_DIR), what is wrong and what to do. Needs no CUDA library.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace wb {

enum class ImageKind { Fatbin, Cubin, Ptx };

class ImageError : public std::runtime_error {
 public:
  ImageError(std::string path, std::string problem, const std::string& message);
  const std::string& path() const noexcept { return path_; }
  // What is wrong, e.g. "cut short: header says 47000 bytes, file has 300".
  const std::string& problem() const noexcept { return problem_; }

 private:
  std::string path_, problem_;
};

// The kind an image's file name says it is (.fatbin, .cubin, .ptx); throws ImageError otherwise.
ImageKind imageKindOf(const std::string& path);

// What is wrong with the image at path, or "" when it passes every check.
std::string imageProblem(const std::string& path);
// The same checks on bytes already in memory, such as an image compiled into the program.
std::string imageProblem(const void* data, std::size_t size, ImageKind kind);

// kernelImage(file), checked; throws ImageError.
std::string verifiedImagePath(const std::string& file);
// The bytes of kernelImage(file), checked; a PTX image gets a terminating NUL, so .data() can be
// handed to cuModuleLoadData as the C string it expects. Throws ImageError.
std::vector<char> readVerifiedImage(const std::string& file);
// Throws ImageError unless data holds an intact image of the kind; name is for the message.
void verifyImageBytes(const void* data, std::size_t size, ImageKind kind, const std::string& name);

// What a cubin says of itself, read from its ELF headers after the cubin checks above (a cubin that
// fails them throws std::invalid_argument, naming the problem).
// The architecture it was built for (90 for sm_90): e_flags holds it in bits 0-7 up to ELF ABI
// version 7 (CUDA 12.x) and in bits 8-15 from ABI version 8 (CUDA 13).
unsigned cubinArchitecture(const void* data, std::size_t size);
// The functions it defines: its symbol table's STT_FUNC entries that are not undefined (the kernels,
// and the device functions that were not inlined away), by their (mangled) names.
std::vector<std::string> cubinFunctions(const void* data, std::size_t size);
template <class Bytes>
unsigned cubinArchitecture(const Bytes& cubin) { return cubinArchitecture(cubin.data(), cubin.size()); }
template <class Bytes>
std::vector<std::string> cubinFunctions(const Bytes& cubin) { return cubinFunctions(cubin.data(), cubin.size()); }

}  // namespace wb
