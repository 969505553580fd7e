// Reference solutions of lesson 17's exercises.
#include "exercises.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <stdexcept>

namespace ex17 {

// cuDriverGetVersion answers before cuInit and initialises nothing (lesson 01), so it is the check
// for a driver that leaves this process fit to fork. Every worker is forked before any is waited for,
// so they run side by side; each has its own pipe, whose write end the parent closes at once, so the
// parent's read ends at that worker's exit. A worker never returns into this process's code: it
// ends with _exit, which runs no destructor and no atexit handler that belongs to the parent.
std::vector<std::string> runForked(unsigned n, Job job, unsigned limitSeconds) {
  int version = 0;
  if (cuDriverGetVersion(&version) != CUDA_SUCCESS) throw std::runtime_error("runForked: no CUDA driver");
  std::fflush(stdout);  // a worker must not write this process's buffered output a second time
  std::fflush(stderr);
  std::vector<pid_t> pids;
  std::vector<int> pipes;
  for (unsigned i = 0; i < n; ++i) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("runForked: pipe failed");
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("runForked: fork failed");
    if (pid == 0) {
      alarm(limitSeconds);
      close(fds[0]);
      std::string line;
      try {
        line = job(i);
      } catch (...) {
        _exit(1);
      }
      for (size_t sent = 0; sent < line.size();) {
        const ssize_t w = write(fds[1], line.data() + sent, line.size() - sent);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) _exit(2);
        sent += static_cast<size_t>(w);
      }
      _exit(0);
    }
    close(fds[1]);
    pids.push_back(pid);
    pipes.push_back(fds[0]);
  }
  std::vector<std::string> lines(n);
  for (unsigned i = 0; i < n; ++i) {
    std::string text;
    char buf[256];
    for (ssize_t got; (got = read(pipes[i], buf, sizeof buf)) != 0;) {
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) break;
      text.append(buf, static_cast<size_t>(got));
    }
    close(pipes[i]);
    int status = 0;
    while (waitpid(pids[i], &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) lines[i] = text;
  }
  return lines;
}

// The opened event behaves like a local event created with CU_EVENT_DISABLE_TIMING; a wait on it
// takes the producer's most recent record, made before the handle was sent. The wait and the copy
// are both enqueued in stream, so the host waits for nothing here: the stream does.
CUevent copyAfter(const CUipcEventHandle& produced, CUdeviceptr shared, void* host, std::size_t bytes, CUstream stream) {
  CUevent opened = nullptr;
  CU_CHECK(cuIpcOpenEventHandle(&opened, produced));
  const CUresult waited = cuStreamWaitEvent(stream, opened, 0);
  const CUresult copied = waited == CUDA_SUCCESS ? cuMemcpyDtoHAsync(host, shared, bytes, stream) : waited;
  if (copied != CUDA_SUCCESS) {
    cuEventDestroy(opened);
    CU_CHECK(copied);
  }
  return opened;
}

// The server holds three things of the memory: the handle from cuMemCreate, its own mapping (to copy
// the data in), and the exported descriptor. The client holds its own: the descriptor it received, the
// handle it imported, its mapping. The memory lives while any of them does; so once the client has
// mapped it, the server gives back all three, and the client's unmap is then the last reference.
void shareWithClient(int socket, CUdevice dev, const void* data, std::size_t bytes) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t granule = 0;
  CU_CHECK(cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  const size_t size = (bytes + granule - 1) / granule * granule;
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemCreate(&handle, size, &prop, 0));
  CUdeviceptr ptr = 0;
  CU_CHECK(cuMemAddressReserve(&ptr, size, granule, 0, 0));
  CU_CHECK(cuMemMap(ptr, size, 0, handle, 0));
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = dev;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_CHECK(cuMemSetAccess(ptr, size, &access, 1));
  CU_CHECK(cuMemcpyHtoD(ptr, data, bytes));
  int fd = -1;
  CU_CHECK(cuMemExportToShareableHandle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CU_CHECK(cuMemRelease(handle));  // the mapping and the descriptor hold the memory from here
  const ShareOffer offer{size};
  ShareReply reply{};
  const bool sent = wb::sendMessage(socket, &offer, sizeof offer, fd);
  const bool answered =
      sent && wb::receiveMessage(socket, &reply, sizeof reply, nullptr, kShareReplySeconds) == wb::Received::Message;
  close(fd);
  CU_CHECK(cuMemUnmap(ptr, size));
  CU_CHECK(cuMemAddressFree(ptr, size));
  if (!answered || reply.mapped != 1) throw std::runtime_error("shareWithClient: the client did not map the memory");
}

}  // namespace ex17
