// Deliberately wrong variants of lesson 17's exercises: each check must fail on them.
#include "exercises.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <stdexcept>

namespace ex17 {

// Wrong: "check for a GPU the usual way before starting the workers": cuInit and cuDeviceGetCount in
// this process, then the same forks. Every fork now copies a process that has initialised CUDA: the
// detector sees it at each fork (`initialisedAtFork == 0` fails), and each worker gets whatever the
// driver gives a child forked after cuInit (lesson 17's step 1 shows what this driver answered).
std::vector<std::string> runForked(unsigned n, Job job, unsigned limitSeconds) {
  CU_CHECK(cuInit(0));
  int devices = 0;
  CU_CHECK(cuDeviceGetCount(&devices));
  if (devices == 0) throw std::runtime_error("runForked: no CUDA device");
  std::fflush(stdout);
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
      if (write(fds[1], line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(2);
      _exit(0);
    }
    close(fds[1]);
    pids.push_back(pid);
    pipes.push_back(fds[0]);
  }
  std::vector<std::string> lines(n);
  for (unsigned i = 0; i < n; ++i) {
    char buf[256];
    for (ssize_t got; (got = read(pipes[i], buf, sizeof buf)) != 0;) {
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) break;
      lines[i].append(buf, static_cast<size_t>(got));
    }
    close(pipes[i]);
    int status = 0;
    while (waitpid(pids[i], &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) lines[i].clear();
  }
  return lines;
}

// Wrong: "the producer recorded its event before it sent the handle, so by the time the consumer has
// the handle the batch is ready": the copy is enqueued without cuStreamWaitEvent. It runs at once,
// while the producer's gate still holds the write, and copies the old value: the host buffer holds
// it (`stale == 0` and `fresh == words` fail), and unless the copy was still under way when they
// were read, `pending == CUDA_ERROR_NOT_READY` and `pendingWord == kUnread` fail too.
CUevent copyAfter(const CUipcEventHandle& produced, CUdeviceptr shared, void* host, std::size_t bytes, CUstream stream) {
  CUevent opened = nullptr;
  CU_CHECK(cuIpcOpenEventHandle(&opened, produced));
  CU_CHECK(cuMemcpyDtoHAsync(host, shared, bytes, stream));
  return opened;
}

// Wrong: "the descriptor went to the client, which has its own copy of it now": everything is given
// back but the exported descriptor. An open descriptor is a reference to the memory (the reference:
// it is released once all shareable handles are closed), so after the client's unmap the memory
// stays taken for as long as this process lives, and the free memory does not come back
// (`freeAfter + kSlack >= freeBefore` fails).
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
  CU_CHECK(cuMemRelease(handle));
  const ShareOffer offer{size};
  ShareReply reply{};
  if (!wb::sendMessage(socket, &offer, sizeof offer, fd) ||
      wb::receiveMessage(socket, &reply, sizeof reply, nullptr, kShareReplySeconds) != wb::Received::Message)
    throw std::runtime_error("shareWithClient: the client did not answer");
  CU_CHECK(cuMemUnmap(ptr, size));
  CU_CHECK(cuMemAddressFree(ptr, size));
}

}  // namespace ex17
