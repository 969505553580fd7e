#include "image_reader.hpp"

#include "images.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <utility>

namespace wb {
namespace {

// Layouts, all little-endian:
//   fatbin header  u32 magic, u16 version, u16 header size, u64 size of everything after the header
//   fatbin entry   u16 kind (1 PTX, 2 ELF), u16 version, u32 entry header size, u64 payload size, ...
//   ELF64 header   e_ident[16] (EI_ABIVERSION @8), ..., u64 e_phoff @32, u64 e_shoff @40,
//                  u32 e_flags @48, u16 e_phentsize @54, u16 e_phnum @56, u16 e_shentsize @58,
//                  u16 e_shnum @60
//   ELF64 section  u32 sh_type @4, u64 sh_offset @24, u64 sh_size @32, u32 sh_link @40
//   ELF64 symbol   u32 st_name @0, u8 st_info @4 (type in bits 0-3), u16 st_shndx @6; 24 bytes
constexpr std::uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr std::size_t kFatbinHeader = 16, kFatbinEntryHeader = 16, kElfHeader = 64;
constexpr std::uint16_t kEmCuda = 190;
constexpr std::uint32_t kShtNobits = 8;  // a section with no bytes in the file (.bss)
constexpr std::uint32_t kShtSymtab = 2;
constexpr std::size_t kElfSymbol = 24;
constexpr unsigned kSttFunc = 2;

template <class T>
T read(const unsigned char* bytes, std::size_t offset) {
  T value;
  std::memcpy(&value, bytes + offset, sizeof value);
  return value;
}

std::string n(std::uint64_t v) { return std::to_string(v); }

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// "cut short: header says 47000 bytes, file has 300": the message every truncated image gets.
std::string cutShort(const std::string& claim, std::uint64_t size) {
  return "cut short: " + claim + ", file has " + n(size);
}

std::string fatbinProblem(const unsigned char* b, std::size_t size) {
  if (size < kFatbinHeader) return cutShort("a fatbin header is " + n(kFatbinHeader) + " bytes", size);
  if (const auto magic = read<std::uint32_t>(b, 0); magic != kFatbinMagic)
    return "not a fatbin: magic is " + hex32(magic) + ", a fatbin starts with " + hex32(kFatbinMagic);
  const std::uint64_t headerSize = read<std::uint16_t>(b, 6);
  const std::uint64_t payload = read<std::uint64_t>(b, 8);
  if (headerSize < kFatbinHeader || headerSize > size)
    return "damaged fatbin header: it says the header is " + n(headerSize) + " bytes";
  // Compared without adding, so a claim near 2^64 cannot wrap around.
  if (payload > size - headerSize) return cutShort("header says " + n(headerSize + payload) + " bytes", size);
  if (payload < size - headerSize)
    return "longer than its header says: header says " + n(headerSize + payload) + " bytes, file has " + n(size);
  unsigned entries = 0;
  for (std::uint64_t at = headerSize; at < size; ++entries) {
    if (size - at < kFatbinEntryHeader) return "entry " + n(entries) + " at byte " + n(at) + " is cut short";
    const auto kind = read<std::uint16_t>(b, at);
    const std::uint64_t entryHeader = read<std::uint32_t>(b, at + 4);
    const std::uint64_t entryPayload = read<std::uint64_t>(b, at + 8);
    if (kind != 1 && kind != 2) return "entry " + n(entries) + " at byte " + n(at) + " has unknown kind " + n(kind);
    if (entryHeader < kFatbinEntryHeader || entryHeader > size - at || entryPayload > size - at - entryHeader)
      return "entry " + n(entries) + " at byte " + n(at) + " runs past the end of the file";
    at += entryHeader + entryPayload;
  }
  if (entries == 0) return "a fatbin with no entries: no machine code and no PTX";
  return "";
}

std::string cubinProblem(const unsigned char* b, std::size_t size) {
  if (size < 4 || std::memcmp(b, "\x7f" "ELF", 4) != 0) return "not a cubin: it does not start with the ELF magic";
  if (size < kElfHeader) return cutShort("an ELF header is " + n(kElfHeader) + " bytes", size);
  if (b[4] != 2) return "not a 64-bit ELF (EI_CLASS is " + n(b[4]) + ")";
  if (b[5] != 1) return "not a little-endian ELF (EI_DATA is " + n(b[5]) + ")";
  if (const auto machine = read<std::uint16_t>(b, 18); machine != kEmCuda)
    return "not a CUDA ELF: e_machine is " + n(machine) + ", EM_CUDA is " + n(kEmCuda);
  const auto phoff = read<std::uint64_t>(b, 32), shoff = read<std::uint64_t>(b, 40);
  const std::uint64_t phentsize = read<std::uint16_t>(b, 54), phnum = read<std::uint16_t>(b, 56);
  const std::uint64_t shentsize = read<std::uint16_t>(b, 58), shnum = read<std::uint16_t>(b, 60);
  if (shnum == 0 || shentsize < 64) return "damaged ELF header: no usable section header table";
  if (shoff > size || shnum * shentsize > size - shoff)
    return cutShort("the section header table ends at byte " + n(shoff + shnum * shentsize), size);
  if (phnum && (phentsize < 56 || phoff > size || phnum * phentsize > size - phoff))
    return cutShort("the program header table ends at byte " + n(phoff + phnum * phentsize), size);
  for (std::uint64_t i = 0; i < shnum; ++i) {
    const std::uint64_t at = shoff + i * shentsize;  // Elf64_Shdr: sh_type @4, sh_offset @24, sh_size @32
    if (read<std::uint32_t>(b, at + 4) == kShtNobits) continue;
    const auto offset = read<std::uint64_t>(b, at + 24), bytes = read<std::uint64_t>(b, at + 32);
    if (offset > size || bytes > size - offset)
      return cutShort("section " + n(i) + " ends at byte " + n(offset + bytes), size);
  }
  return "";
}

std::string ptxProblem(const unsigned char* b, std::size_t size) {
  const void* nul = std::memchr(b, '\0', size);
  if (nul) return "not PTX text: a NUL byte at byte " + n(static_cast<const unsigned char*>(nul) - b);
  const std::string text(reinterpret_cast<const char*>(b), size);
  if (text.find(".version") == std::string::npos) return "not PTX: no .version directive";
  if (text.find(".target") == std::string::npos) return "not PTX: no .target directive";
  // PTX has no size field, so text cut short is found by its shape: nvcc ends every line, the last
  // one too, with a newline, and puts every kernel body in braces. A cut that lands exactly on a
  // line outside any kernel passes; the JIT then reports the missing part with an error of its own.
  std::ptrdiff_t depth = 0;
  for (char c : text) depth += (c == '{') - (c == '}');
  if (depth != 0) return "cut short or damaged: unbalanced braces";
  if (text.back() != '\n') return "cut short: the last line ends without a newline";
  return "";
}

// Where the folder came from and what to do, for every message about a file in it.
std::string folderAdvice(const std::string& path) {
  const std::string dir = path.substr(0, path.find_last_of('/'));
  const char* env = std::getenv("CUDA_WORKBOOK_KERNEL_DIR");
  if (env && *env && dir == kernelDir())
    return "The folder " + dir + " comes from CUDA_WORKBOOK_KERNEL_DIR.\n"
           "What to do: unset CUDA_WORKBOOK_KERNEL_DIR to use the images the build made, or copy intact images there.";
  if (dir == kernelDir())
    return "The folder " + dir + " is where the build writes the kernel images.\n"
           "What to do: rebuild them: cmake --build build --target kernel-images";
  return "What to do: replace " + path + " with an intact image.";
}

std::vector<char> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw ImageError(path, "cannot be read", path + ": cannot be read.\n" + folderAdvice(path));
  return bytes;
}

// The file's own problems (missing, a directory, a FIFO that would block a reader, empty), or "".
std::string fileProblem(const std::string& path) {
  struct stat st = {};
  if (stat(path.c_str(), &st) != 0)
    return errno == ENOENT ? "no such file" : std::string("cannot be opened: ") + std::strerror(errno);
  if (S_ISDIR(st.st_mode)) return "a directory, not an image file";
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (st.st_size == 0) return "empty (0 bytes)";
  return "";
}

void throwFor(const std::string& path, const std::string& problem) {
  throw ImageError(path, problem, path + ": " + problem + ".\n" + folderAdvice(path));
}

}  // namespace

ImageError::ImageError(std::string path, std::string problem, const std::string& message)
    : std::runtime_error(message), path_(std::move(path)), problem_(std::move(problem)) {}

ImageKind imageKindOf(const std::string& path) {
  auto endsWith = [&](const char* suffix) {
    const std::size_t len = std::strlen(suffix);
    return path.size() >= len && path.compare(path.size() - len, len, suffix) == 0;
  };
  if (endsWith(".fatbin")) return ImageKind::Fatbin;
  if (endsWith(".cubin")) return ImageKind::Cubin;
  if (endsWith(".ptx")) return ImageKind::Ptx;
  throwFor(path, "not a kernel image name: expected .fatbin, .cubin or .ptx");
  return ImageKind::Fatbin;  // not reached
}

std::string imageProblem(const void* data, std::size_t size, ImageKind kind) {
  const auto* b = static_cast<const unsigned char*>(data);
  if (size == 0) return "empty (0 bytes)";
  switch (kind) {
    case ImageKind::Fatbin: return fatbinProblem(b, size);
    case ImageKind::Cubin: return cubinProblem(b, size);
    case ImageKind::Ptx: return ptxProblem(b, size);
  }
  return "unknown image kind";
}

std::string imageProblem(const std::string& path) {
  const ImageKind kind = imageKindOf(path);
  if (std::string problem = fileProblem(path); !problem.empty()) return problem;
  const std::vector<char> bytes = readFile(path);
  return imageProblem(bytes.data(), bytes.size(), kind);
}

std::string verifiedImagePath(const std::string& file) {
  const std::string path = kernelImage(file);
  if (const std::string problem = imageProblem(path); !problem.empty()) throwFor(path, problem);
  return path;
}

std::vector<char> readVerifiedImage(const std::string& file) {
  const std::string path = kernelImage(file);
  const ImageKind kind = imageKindOf(path);
  if (const std::string problem = fileProblem(path); !problem.empty()) throwFor(path, problem);
  std::vector<char> bytes = readFile(path);
  if (const std::string problem = imageProblem(bytes.data(), bytes.size(), kind); !problem.empty())
    throwFor(path, problem);
  if (kind == ImageKind::Ptx) bytes.push_back('\0');
  return bytes;
}

void verifyImageBytes(const void* data, std::size_t size, ImageKind kind, const std::string& name) {
  if (const std::string problem = imageProblem(data, size, kind); !problem.empty())
    throw ImageError(name, problem, name + ": " + problem + ".\nWhat to do: rebuild the program.");
}

namespace {

// The bytes of a cubin that passes cubinProblem; throws std::invalid_argument otherwise.
const unsigned char* checkedCubin(const void* data, std::size_t size) {
  const auto* b = static_cast<const unsigned char*>(data);
  const std::string problem = size == 0 ? "empty (0 bytes)" : cubinProblem(b, size);
  if (!problem.empty()) throw std::invalid_argument("not an intact cubin: " + problem);
  return b;
}

}  // namespace

unsigned cubinArchitecture(const void* data, std::size_t size) {
  const unsigned char* b = checkedCubin(data, size);
  const auto flags = read<std::uint32_t>(b, 48);
  return b[8] >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
}

std::vector<std::string> cubinFunctions(const void* data, std::size_t size) {
  const unsigned char* b = checkedCubin(data, size);
  const auto shoff = read<std::uint64_t>(b, 40);
  const std::uint64_t shentsize = read<std::uint16_t>(b, 58), shnum = read<std::uint16_t>(b, 60);
  std::vector<std::string> names;
  for (std::uint64_t i = 0; i < shnum; ++i) {
    const std::uint64_t table = shoff + i * shentsize;
    const auto link = read<std::uint32_t>(b, table + 40);
    if (read<std::uint32_t>(b, table + 4) != kShtSymtab || link >= shnum) continue;
    const std::uint64_t strings = shoff + link * shentsize;
    if (read<std::uint32_t>(b, strings + 4) == kShtNobits) continue;  // no bytes in the file to read
    const auto stringsAt = read<std::uint64_t>(b, strings + 24), stringsSize = read<std::uint64_t>(b, strings + 32);
    const auto symbolsAt = read<std::uint64_t>(b, table + 24), symbolsSize = read<std::uint64_t>(b, table + 32);
    for (std::uint64_t at = symbolsAt; at + kElfSymbol <= symbolsAt + symbolsSize; at += kElfSymbol) {
      const auto name = read<std::uint32_t>(b, at);
      if ((b[at + 4] & 0xf) != kSttFunc || read<std::uint16_t>(b, at + 6) == 0 || name >= stringsSize) continue;
      // cubinProblem kept every section inside the file; the name stops at its NUL or its section's end.
      const char* first = reinterpret_cast<const char*>(b + stringsAt + name);
      names.emplace_back(first, strnlen(first, stringsSize - name));
    }
  }
  return names;
}

}  // namespace wb
