#include "channel.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace wb {

SocketPair::SocketPair() {
  if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, fds) != 0) throw std::runtime_error("socketpair failed");
}

SocketPair::~SocketPair() {
  for (int fd : fds)
    if (fd >= 0) close(fd);
}

//! [send-fd]
// One datagram: the message's bytes, and fd as SCM_RIGHTS ancillary data. The kernel gives the
// receiver a descriptor of its own for the same open file; the number itself means nothing there.
bool sendMessage(int socket, const void* data, std::size_t bytes, int fd) {
  iovec part{const_cast<void*>(data), bytes};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &part, msg.msg_iovlen = 1;
  if (fd >= 0) {
    msg.msg_control = control, msg.msg_controllen = sizeof control;
    cmsghdr* rights = CMSG_FIRSTHDR(&msg);
    rights->cmsg_level = SOL_SOCKET, rights->cmsg_type = SCM_RIGHTS, rights->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(rights), &fd, sizeof fd);
  }
  ssize_t sent = -1;
  while ((sent = sendmsg(socket, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  return sent == static_cast<ssize_t>(bytes);
}
//! [send-fd]

//! [receive-fd]
// The receiving side: waits (poll) at most the timeout for a datagram, then takes its bytes and
// the descriptor it carried, made close-on-exec as it arrives.
Received receiveMessage(int socket, void* data, std::size_t bytes, int* fd, double timeoutSeconds) {
  if (fd) *fd = -1;
  pollfd ready{socket, POLLIN, 0};
  const int ms = timeoutSeconds < 0 ? -1 : static_cast<int>(timeoutSeconds * 1000.0);
  int polled = 0;
  while ((polled = poll(&ready, 1, ms)) < 0 && errno == EINTR) {
  }
  if (polled == 0) return Received::TimedOut;
  iovec part{data, bytes};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &part, msg.msg_iovlen = 1;
  msg.msg_control = control, msg.msg_controllen = sizeof control;
  const ssize_t got = polled < 0 ? -1 : recvmsg(socket, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  int passed = -1;
  const cmsghdr* rights = got < 0 ? nullptr : CMSG_FIRSTHDR(&msg);
  if (rights && rights->cmsg_level == SOL_SOCKET && rights->cmsg_type == SCM_RIGHTS)
    std::memcpy(&passed, CMSG_DATA(rights), sizeof passed);
  const bool whole = got == static_cast<ssize_t>(bytes) && !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC));
  if (whole && fd) *fd = passed;
  else if (passed >= 0) close(passed);  // not asked for, or part of a broken message
  return whole ? Received::Message : Received::Failed;
}
//! [receive-fd]

ChildChannel::ChildChannel(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                           unsigned limitSeconds) {
  std::vector<std::string> withChannel(env);
  withChannel.push_back("WORKBOOK_CHANNEL=" + std::to_string(sockets_.fds[1]));
  const int childEnd = sockets_.fds[1];
  running_ = std::async(std::launch::async, [argv, withChannel, limitSeconds, childEnd] {
    return runProcess(argv, withChannel, limitSeconds, {childEnd});
  });
}

ChildChannel::~ChildChannel() {
  if (running_.valid()) running_.wait();
}

bool ChildChannel::send(const void* data, std::size_t bytes, int fd) {
  return sendMessage(sockets_.fds[0], data, bytes, fd);
}

bool ChildChannel::ended() const {
  return haveEnd_ || running_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

bool ChildChannel::receive(void* data, std::size_t bytes, double timeoutSeconds, int* fd) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                        std::chrono::duration<double>(std::max(timeoutSeconds, 0.0)));
  for (;;) {
    // Whether the child has ended is read before the socket: a message it sent before ending is
    // in the socket by then, and the last look below still finds it.
    const bool gone = ended();
    const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
    const Received r = receiveMessage(sockets_.fds[0], data, bytes, fd, gone ? 0.0 : std::clamp(left, 0.0, 0.05));
    if (r != Received::TimedOut) return r == Received::Message;
    if (gone || left <= 0) return false;
  }
}

const ProcessEnd& ChildChannel::end() {
  if (!haveEnd_) {
    end_ = running_.get();
    haveEnd_ = true;
  }
  return end_;
}

int channelFromParent() {
  const char* fd = std::getenv("WORKBOOK_CHANNEL");
  return fd ? std::atoi(fd) : -1;
}

}  // namespace wb
