// Talking to a child process while it runs (lessons 14 and 17): a connected pair of Unix sockets,
// datagrams that may carry a file descriptor (SCM_RIGHTS), and a child started in a thread with its
// end of the pair. Nothing here waits forever: every receive in a parent has a deadline, and notices
// at once when the child has ended. Needs no CUDA library.
#pragma once

#include "process.hpp"

#include <cstddef>
#include <future>
#include <string>
#include <vector>

namespace wb {

// Two connected Unix datagram sockets, closed at scope exit. Both are close-on-exec: a child gets
// fds[1] only where runProcess is told to let it inherit that one (its `inherit` argument).
struct SocketPair {
  int fds[2] = {-1, -1};
  SocketPair();  // throws std::runtime_error when the sockets cannot be made
  ~SocketPair();
  SocketPair(const SocketPair&) = delete;
  SocketPair& operator=(const SocketPair&) = delete;
};

// Sends bytes of data as one datagram, with fd (when fd >= 0) as SCM_RIGHTS ancillary data: the
// receiver gets a descriptor of its own for the same open file. True when the whole datagram went.
bool sendMessage(int socket, const void* data, std::size_t bytes, int fd = -1);

enum class Received { Message, TimedOut, Failed };

// Receives one datagram of exactly bytes into data, waiting at most timeoutSeconds (< 0: as long as
// it takes). *fd (when fd is not null) gets the descriptor the datagram carried, close-on-exec, or
// -1; a descriptor nobody asked for is closed. A datagram of another size is Failed.
Received receiveMessage(int socket, void* data, std::size_t bytes, int* fd, double timeoutSeconds);

// A message of type T with a descriptor; the receiving side returns the descriptor, or -1.
template <class T>
bool sendFd(int socket, int fd, const T& what) {
  return sendMessage(socket, &what, sizeof what, fd);
}
template <class T>
int receiveFd(int socket, T& what) {
  int fd = -1;
  return receiveMessage(socket, &what, sizeof what, &fd, -1) == Received::Message ? fd : -1;
}

// A child process started now, in a thread, through runProcess (so with a time limit), holding the
// other end of a socket pair, whose number it finds in WORKBOOK_CHANNEL (channelFromParent()).
class ChildChannel {
 public:
  ChildChannel(const std::vector<std::string>& argv, const std::vector<std::string>& env, unsigned limitSeconds);
  ~ChildChannel();  // waits for the child to end, which its time limit bounds
  ChildChannel(const ChildChannel&) = delete;
  ChildChannel& operator=(const ChildChannel&) = delete;

  // This process's end of the socket pair.
  int socket() const { return sockets_.fds[0]; }
  // One message to the child; false when it could not be sent.
  bool send(const void* data, std::size_t bytes, int fd = -1);
  // One message from the child: true when it came within timeoutSeconds and before the child ended
  // (a message the child sent before ending still counts). fd as in receiveMessage.
  bool receive(void* data, std::size_t bytes, double timeoutSeconds, int* fd = nullptr);
  template <class T>
  bool send(const T& what, int fd = -1) {
    return send(&what, sizeof what, fd);
  }
  template <class T>
  bool receive(T& what, double timeoutSeconds, int* fd = nullptr) {
    return receive(&what, sizeof what, timeoutSeconds, fd);
  }
  bool ended() const;
  // How it ended: waits for it (at most its time limit) the first time.
  const ProcessEnd& end();

 private:
  SocketPair sockets_;
  std::future<ProcessEnd> running_;
  bool haveEnd_ = false;
  ProcessEnd end_;
};

// In a child a ChildChannel started: its end of the socket pair (from WORKBOOK_CHANNEL), or -1.
int channelFromParent();

}  // namespace wb
