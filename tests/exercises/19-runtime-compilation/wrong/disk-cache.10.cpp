// Wrong (R4): throws for a damaged entry instead of compiling again
//
// "A corrupt cache is a fault worth reporting." The cache is only a copy of what the compiler makes:
// a file cut short by a full disk, or by a crash before a rename was ever made atomic, must cost a
// compile, not the request. In the check, with every entry cut to half its size,
// `CHECK_NOTHROW(healed = ...)` fails.
#include "exercises.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <string>

namespace ex19 {

namespace {

// One field of the key: its name, its length, its bytes. Lengths make the spelling unambiguous:
// no two different inputs spell the same key, whatever characters they hold.
void add(std::string& key, const char* field, const std::string& value) {
  key += field;
  key += ' ' + std::to_string(value.size()) + ':' + value + '\n';
}

std::string keyOf(const CompileInputs& in) {
  std::string key;
  add(key, "source", in.source);
  add(key, "options", std::to_string(in.options.size()));
  for (const std::string& o : in.options) add(key, "option", o);
  add(key, "compute capability", std::to_string(in.ccMajor) + "." + std::to_string(in.ccMinor));
  add(key, "nvrtc", std::to_string(in.nvrtcMajor) + "." + std::to_string(in.nvrtcMinor));
  add(key, "nvrtc build", in.nvrtcBuild);
  add(key, "driver", std::to_string(in.driverVersion));
  return key;
}

// Whether dir may hold the cache: made here, private, when it does not exist; otherwise a folder
// (not a link to one) of this user that nobody else can write to. Whoever can write there can plant
// an entry that passes every check below and holds their code.
bool privateFolder(const std::string& dir) {
  if (mkdir(dir.c_str(), 0700) == 0) return true;
  if (errno != EEXIST) return false;
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  return st.st_uid == geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// Writes the entry under a name of its own (mkstemp: unique to this writer, process or thread),
// flushes it to the disk, and renames it into place: a reader finds the whole entry or none.
void store(const std::string& dir, const std::string& path, const std::string& head, const std::vector<char>& cubin) {
  std::string partial = dir + "/.partial-XXXXXX";
  const int fd = mkstemp(&partial[0]);
  if (fd < 0) return;  // a cache that cannot store is still a compile
  bool whole = true;
  for (const std::string& part : {head, std::string(cubin.begin(), cubin.end())})
    for (size_t done = 0; whole && done < part.size();) {
      const ssize_t n = write(fd, part.data() + done, part.size() - done);
      if (n < 0 && errno == EINTR) continue;
      whole = n > 0;
      done += n > 0 ? static_cast<size_t>(n) : 0;
    }
  whole = whole && fsync(fd) == 0;
  close(fd);
  if (!whole || std::rename(partial.c_str(), path.c_str()) != 0) std::remove(partial.c_str());
}

}  // namespace

// The file name is a hash of the key, only where to look; the entry holds the key itself, so a hit
// is exactly these inputs, and its cubin must pass the image reader, so a damaged entry is a miss.
std::vector<char> cachedCompile(const std::string& dir, const CompileInputs& inputs, const Compiler& compile) {
  if (!privateFolder(dir)) return compile(inputs);
  const std::string key = keyOf(inputs);
  char name[32];
  std::snprintf(name, sizeof name, "%016zx.entry", std::hash<std::string>{}(key));
  const std::string path = dir + "/" + name, head = "ex19 cache entry\n" + std::to_string(key.size()) + "\n" + key;
  {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (bytes.size() > head.size() && bytes.compare(0, head.size(), head) == 0) {
      std::vector<char> cubin(bytes.begin() + static_cast<std::ptrdiff_t>(head.size()), bytes.end());
      const std::string problem = wb::imageProblem(cubin.data(), cubin.size(), wb::ImageKind::Cubin);
      if (!problem.empty()) throw std::runtime_error("cachedCompile: the entry " + path + " is damaged: " + problem);
      return cubin;
    }
  }
  std::vector<char> cubin = compile(inputs);
  store(dir, path, head, cubin);
  return cubin;
}

}  // namespace ex19
