// Lesson 12's claims: the driver has every function the lesson program imports; a libcuda that
// lacks one (the toolkit's stub with a name removed) stops the program before main under immediate
// binding and at the first call under lazy binding; what cuGetProcAddress returns for a call by
// version (cuCtxCreate's three signatures), an unknown name, a version older than the call and one
// newer than the driver; what the driver does with PTX from a newer toolkit and for a newer GPU;
// that PTX runs on a GPU newer than its target; and that the JIT cache fills a CUDA_CACHE_PATH
// folder only when it is not disabled. Broken images and libraries are derived from built ones at
// run time.
#include "damaged_images.hpp"
#include "process.hpp"
#include "scratch.hpp"
#include "support.hpp"

#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <elf.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>

#ifndef WORKBOOK_STUB_DRIVER_DIR  // lessons/CMakeLists.txt defines it where the build has the stub
#define WORKBOOK_STUB_DRIVER_DIR ""
#endif

namespace {

// What the suites read from ELF files: the section headers, and in them the dynamic symbols and
// the dynamic section. A file that is not 64-bit ELF has no sections.
struct Elf {
  std::vector<char> bytes;
  std::vector<Elf64_Shdr> sections;
  explicit Elf(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    Elf64_Ehdr header;
    if (bytes.size() < sizeof header) return;
    std::memcpy(&header, bytes.data(), sizeof header);
    if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64) return;
    for (unsigned i = 0; i < header.e_shnum; ++i) {
      Elf64_Shdr section;
      if (header.e_shoff + (i + 1) * static_cast<size_t>(header.e_shentsize) > bytes.size()) return;
      std::memcpy(&section, bytes.data() + header.e_shoff + i * header.e_shentsize, sizeof section);
      sections.push_back(section);
    }
  }
  // Each dynamic symbol: whether the file defines it, its name, and the name's offset in the file.
  template <typename F>
  void forEachDynamicSymbol(F&& f) const {
    for (const Elf64_Shdr& section : sections) {
      if (section.sh_type != SHT_DYNSYM || section.sh_link >= sections.size()) continue;
      const Elf64_Shdr& strings = sections[section.sh_link];
      for (size_t at = section.sh_offset; at + sizeof(Elf64_Sym) <= section.sh_offset + section.sh_size;
           at += sizeof(Elf64_Sym)) {
        Elf64_Sym symbol;
        std::memcpy(&symbol, bytes.data() + at, sizeof symbol);
        f(symbol.st_shndx != SHN_UNDEF, std::string(bytes.data() + strings.sh_offset + symbol.st_name),
          strings.sh_offset + symbol.st_name);
      }
    }
  }
  // The linker's -z now: BIND_NOW in DT_FLAGS or NOW in DT_FLAGS_1.
  bool bindNow() const {
    for (const Elf64_Shdr& section : sections) {
      if (section.sh_type != SHT_DYNAMIC) continue;
      for (size_t at = section.sh_offset; at + sizeof(Elf64_Dyn) <= section.sh_offset + section.sh_size;
           at += sizeof(Elf64_Dyn)) {
        Elf64_Dyn entry;
        std::memcpy(&entry, bytes.data() + at, sizeof entry);
        if ((entry.d_tag == DT_FLAGS && (entry.d_un.d_val & DF_BIND_NOW)) ||
            (entry.d_tag == DT_FLAGS_1 && (entry.d_un.d_val & DF_1_NOW)))
          return true;
      }
    }
    return false;
  }
};

// The driver functions a program imports: its undefined dynamic symbols whose names start with "cu".
std::vector<std::string> importedDriverSymbols(const std::string& program) {
  std::vector<std::string> names;
  Elf(program).forEachDynamicSymbol([&](bool defined, const std::string& name, size_t) {
    if (!defined && name.rfind("cu", 0) == 0) names.push_back(name);
  });
  return names;
}

// A copy of a library in folder/libcuda.so.1 whose exported `symbol` no longer matches its name
// (first letter 'x'): what the loader sees in a driver older than that function. False when the
// library does not define that name in a string of its own.
bool libcudaWithout(const std::string& library, const std::string& folder, const std::string& symbol) {
  Elf elf(library);
  bool renamed = false;
  std::vector<char> bytes = elf.bytes;
  elf.forEachDynamicSymbol([&](bool defined, const std::string& name, size_t offset) {
    if (defined && name == symbol && offset > 0 && bytes[offset - 1] == 0) {
      bytes[offset] = 'x';
      renamed = true;
    }
  });
  std::ofstream out(folder + "/libcuda.so.1", std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return renamed && static_cast<bool>(out);
}

// The lesson program's binding child ("main reached", then cuGetProcAddress) under a libcuda folder.
wb::ProcessEnd bindingChild(const std::string& folder, bool bindNow) {
  return wb::runProcess({WORKBOOK_LESSON_PROGRAM, "--binding-child"},
                        {"LD_LIBRARY_PATH=" + folder, bindNow ? "LD_BIND_NOW=1" : "LD_BIND_NOW"}, 30);
}

bool reachedMain(const wb::ProcessEnd& end) { return end.output.find("main reached") != std::string::npos; }
bool loaderNamed(const wb::ProcessEnd& end, const std::string& symbol) {
  return end.output.find("undefined symbol: " + symbol) != std::string::npos;
}

// A real architecture newer than the device (0 when this list has none): an invented one would be
// an unknown target rather than a newer GPU.
unsigned newerArchitecture(unsigned arch) {
  for (unsigned candidate : {80u, 90u, 100u, 120u})
    if (candidate > arch) return candidate;
  return 0;
}

std::string editedPtx(const std::string& directive, const std::string& value) {
  const std::vector<char> ptx = wb::readVerifiedImage("vector_ops.ptx");
  return std::regex_replace(std::string(ptx.data()), std::regex("\\" + directive + " [^\\n]*"), directive + " " + value,
                            std::regex_constants::format_first_only);
}

struct Lookup {
  CUresult rc;
  CUdriverProcAddressQueryResult status;
  void* pfn;
};

Lookup lookUp(const char* symbol, int version) {
  Lookup l{CUDA_ERROR_UNKNOWN, CU_GET_PROC_ADDRESS_SUCCESS, nullptr};
  l.rc = cuGetProcAddress(symbol, &l.pfn, version, CU_GET_PROC_ADDRESS_DEFAULT, &l.status);
  return l;
}

unsigned ownArch(CUdevice dev) {
  return 10 * wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) +
         wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
}

}  // namespace

TEST_SUITE("versions") {
  // The lesson program is a different binary from this one: read its own import list and look each
  // name up in the driver this process loaded.
  TEST_CASE("the driver supports CUDA 12.0 or newer, and has every driver function the lesson program imports") {
    wbt::initDriver();
    int driver = 0;
    CU_CHECK(cuDriverGetVersion(&driver));
    CHECK(driver >= 12000);
    const std::vector<std::string> imports = importedDriverSymbols(WORKBOOK_LESSON_PROGRAM);
    REQUIRE(imports.size() > 5);  // read, not an empty list that checks nothing
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);  // already loaded: this binary links it
    REQUIRE(lib != nullptr);
    for (const std::string& symbol : imports) {
      CAPTURE(symbol);
      CHECK(dlsym(lib, symbol.c_str()) != nullptr);
    }
    dlclose(lib);
  }
}

// No GPU needed: the lesson program against the toolkit's stub libcuda and against a copy of it
// without cuGetProcAddress_v2 (drivers before CUDA 12.0 lack it). lesson12.binding runs this suite
// on every machine, under the stub driver.
TEST_SUITE("binding") {
  TEST_CASE("a libcuda without a function the program imports stops it before main under immediate binding (LD_BIND_NOW=1), with the loader's message naming the function" *
            doctest::skip(std::string(WORKBOOK_STUB_DRIVER_DIR).empty())) {
    const std::string stub = WORKBOOK_STUB_DRIVER_DIR;
    const wb::ProcessEnd intact = bindingChild(stub, true);
    INFO(intact.output);
    CHECK(reachedMain(intact));  // the stub has every function: the program runs
    CHECK(intact.code == 0);
    wb::ScratchDir old;
    REQUIRE(libcudaWithout(stub + "/libcuda.so.1", old.path(), "cuGetProcAddress_v2"));
    const wb::ProcessEnd now = bindingChild(old.path(), true);
    INFO(now.output);
    CHECK_FALSE(reachedMain(now));
    CHECK(loaderNamed(now, "cuGetProcAddress_v2"));
    CHECK(now.code != 0);
    MESSAGE("observed: exit code " << now.code);
  }

  TEST_CASE("bound lazily, the same program reaches main and dies at its first call of the missing function" *
            doctest::skip(std::string(WORKBOOK_STUB_DRIVER_DIR).empty())) {
    if (Elf(WORKBOOK_LESSON_PROGRAM).bindNow()) {
      wbt::skipCase("the lesson program was linked with immediate binding (-z now) by this toolchain");
      return;
    }
    wb::ScratchDir old;
    REQUIRE(libcudaWithout(std::string(WORKBOOK_STUB_DRIVER_DIR) + "/libcuda.so.1", old.path(), "cuGetProcAddress_v2"));
    const wb::ProcessEnd lazy = bindingChild(old.path(), false);
    INFO(lazy.output);
    CHECK(reachedMain(lazy));
    CHECK(loaderNamed(lazy, "cuGetProcAddress_v2"));
    CHECK(lazy.output.find("cuGetProcAddress returned") == std::string::npos);  // the call never returned
    CHECK(lazy.code != 0);
    MESSAGE("observed: exit code " << lazy.code);
  }
}

TEST_SUITE("entry-points") {
  TEST_CASE("cuGetProcAddress returns a working pointer for a call, by the signature of the version asked for") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    const Lookup alloc = lookUp("cuMemAlloc", 12000);
    CHECK(alloc.rc == CUDA_SUCCESS);
    CHECK(alloc.status == CU_GET_PROC_ADDRESS_SUCCESS);
    REQUIRE(alloc.pfn != nullptr);
    CUdeviceptr p = 0;
    CHECK(reinterpret_cast<PFN_cuMemAlloc_v3020>(alloc.pfn)(&p, 4096) == CUDA_SUCCESS);
    CHECK(cuMemFree(p) == CUDA_SUCCESS);

    // The version picks the signature: three arguments before 11.4, execution affinity from 11.4.
    const Lookup create3 = lookUp("cuCtxCreate", 11000);
    REQUIRE(create3.pfn != nullptr);
    CUcontext ctx = nullptr;
    CHECK(reinterpret_cast<PFN_cuCtxCreate_v3020>(create3.pfn)(&ctx, 0, wbt::device(0)) == CUDA_SUCCESS);
    CHECK(wbt::current() == ctx);
    CHECK(cuCtxDestroy(ctx) == CUDA_SUCCESS);
    const Lookup create5 = lookUp("cuCtxCreate", 12000);
    REQUIRE(create5.pfn != nullptr);
    CHECK(reinterpret_cast<PFN_cuCtxCreate_v11040>(create5.pfn)(&ctx, nullptr, 0, 0, wbt::device(0)) == CUDA_SUCCESS);
    CHECK(wbt::current() == ctx);
    CHECK(cuCtxDestroy(ctx) == CUDA_SUCCESS);
#if CUDA_VERSION >= 12050
    // cuGetProcAddress: a version at or past the one a symbol was introduced in returns that
    // versioned function. cuCtxCreate_v4 arrived in 12.5 (PFN_cuCtxCreate_v12050): four arguments.
    const Lookup create4 = lookUp("cuCtxCreate", 12050);
    REQUIRE(create4.pfn != nullptr);
    CHECK(create4.pfn != create5.pfn);  // another function than the 12000 one
    CHECK(lookUp("cuCtxCreate", CUDA_VERSION).pfn == create4.pfn);  // what code asking with CUDA_VERSION gets
    CHECK(reinterpret_cast<PFN_cuCtxCreate_v12050>(create4.pfn)(&ctx, nullptr, 0, wbt::device(0)) == CUDA_SUCCESS);
    CHECK(wbt::current() == ctx);
    CHECK(cuCtxDestroy(ctx) == CUDA_SUCCESS);
#endif
  }

  TEST_CASE("an unknown name is CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, a version older than the call VERSION_NOT_SUFFICIENT, both with no pointer") {
    wbt::initDriver();
    const Lookup unknown = lookUp("cuNoSuchFunction", 12000);
    CHECK(unknown.status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    CHECK(unknown.pfn == nullptr);
    const Lookup tooOld = lookUp("cuLibraryLoadData", 11080);  // cuLibrary* arrived in 12.0
    CHECK(tooOld.status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    CHECK(tooOld.pfn == nullptr);
  }

  TEST_CASE("a CUDA version newer than the driver is CUDA_ERROR_INVALID_VALUE") {
    wbt::initDriver();
    int driver = 0;
    CU_CHECK(cuDriverGetVersion(&driver));
    CHECK(lookUp("cuMemAlloc", driver + 1000).rc == CUDA_ERROR_INVALID_VALUE);
  }
}

TEST_SUITE("images") {
  TEST_CASE("PTX from a newer toolkit (.version 9.9) is CUDA_ERROR_UNSUPPORTED_PTX_VERSION for cuModuleLoadData") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    CUmodule m = nullptr;
    CHECK(cuModuleLoadData(&m, editedPtx(".version", "9.9").c_str()) == CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
  }

  // Under lazy loading a library's kernels are compiled on first use, so the error may come from
  // the load or from the first call that needs the kernel: only that one of them fails is asserted.
  TEST_CASE("the same PTX through cuLibraryLoadData fails at the load or when its kernel is first needed") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    const std::string ptx = editedPtx(".version", "9.9");
    CUlibrary lib = nullptr;
    const CUresult loaded = cuLibraryLoadData(&lib, ptx.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    MESSAGE("cuLibraryLoadData: " << wb::errorName(loaded));
    if (loaded == CUDA_SUCCESS) {
      CUkernel k = nullptr;
      CUresult later = cuLibraryGetKernel(&k, lib, "fill");
      CUfunction f = nullptr;
      if (later == CUDA_SUCCESS) later = cuKernelGetFunction(&f, k);
      MESSAGE("first use: " << wb::errorName(later));
      CHECK(later != CUDA_SUCCESS);
      cuLibraryUnload(lib);
    }
  }

  TEST_CASE("PTX whose .target is newer than the device does not load") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    const unsigned newer = newerArchitecture(ownArch(wbt::device(0)));
    if (newer == 0) {
      wbt::skipCase("no real architecture newer than this device in the suite's list");
      return;
    }
    CUmodule m = nullptr;
    const CUresult rc = cuModuleLoadData(&m, editedPtx(".target", "sm_" + std::to_string(newer)).c_str());
    MESSAGE("observed: sm_" << newer << ": " << wb::errorName(rc));
    CHECK(rc != CUDA_SUCCESS);
    if (rc == CUDA_SUCCESS) cuModuleUnload(m);
  }

  TEST_CASE("PTX for the oldest built architecture runs on this (newer or equal) device") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    REQUIRE(ownArch(wbt::device(0)) >= wb::builtArchitectures().front());
    const std::vector<char> ptx = wb::readVerifiedImage("vector_ops.ptx");
    CUmodule m = nullptr;
    REQUIRE(cuModuleLoadData(&m, ptx.data()) == CUDA_SUCCESS);
    CUfunction fill = nullptr, scale = nullptr;
    CU_CHECK(cuModuleGetFunction(&fill, m, "fill"));
    CU_CHECK(cuModuleGetFunction(&scale, m, "scale"));
    CHECK(wb::mismatches(wb::fillAndScale(fill, scale, 4096, 2, 3, 1), 7.0f) == 0);
    CHECK(cuModuleUnload(m) == CUDA_SUCCESS);
  }
}

TEST_SUITE("jit-cache") {
  TEST_CASE("the JIT cache fills the CUDA_CACHE_PATH folder, and CUDA_CACHE_DISABLE=1 leaves it empty") {
    wb::ScratchDir dir;
    const std::string cached = dir.path() + "/cached", disabled = dir.path() + "/disabled";
    const wb::ProcessEnd first =
        wb::runProcess({WORKBOOK_LESSON_PROGRAM, "--jit-child"}, {"CUDA_CACHE_PATH=" + cached}, 60);
    INFO(first.output);
    CHECK(first.code == 0);
    CHECK(wb::regularFilesUnder(cached) > 0);
    const wb::ProcessEnd off = wb::runProcess({WORKBOOK_LESSON_PROGRAM, "--jit-child"},
                                              {"CUDA_CACHE_PATH=" + disabled, "CUDA_CACHE_DISABLE=1"}, 60);
    INFO(off.output);
    CHECK(off.code == 0);
    CHECK(wb::regularFilesUnder(disabled) == 0);
  }
}

TEST_SUITE("damaged-images") {
  TEST_CASE("pointed at an empty folder or at damaged images, the program stops in seconds, naming the file") {
    wbt::checkProgramRefusesDamagedImages(WORKBOOK_LESSON_PROGRAM);
  }
}
