// The exercises of lesson 17 (processes): their tasks are in exercises.cpp beside this file, their
// checks in tests/exercises/exercise17_processes.cpp.
#pragma once

#include "channel.hpp"  // wb::sendMessage, wb::receiveMessage: exercise 3
#include "workbook.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ex17 {

// Exercise 1: starts n workers at once, worker i the program argv[0] run with the arguments argv
// and then i in decimal; returns what each wrote to its standard output, in the order of the index
// ("" for a worker that exited with a code other than 0, was ended by a signal, or ran past
// limitSeconds and was ended).
std::vector<std::string> runWorkers(const std::vector<std::string>& argv, unsigned n, unsigned limitSeconds);

// Exercise 2: in the consumer: enqueues in stream a copy of bytes from shared to host (pinned) that
// runs only after the producer's work before its interprocess event; returns the opened event at once.
CUevent copyAfter(const CUipcEventHandle& produced, CUdeviceptr shared, void* host, std::size_t bytes, CUstream stream);

// What the server and the client of exercise 3 send each other, one datagram each (wb::sendMessage,
// wb::receiveMessage of common/channel.hpp).
struct ShareOffer {  // server to client, with the memory's file descriptor as SCM_RIGHTS
  uint64_t bytes;    // the size of the allocation: bytes rounded up to the granularity
};
struct ShareReply {  // client to server
  uint32_t mapped;   // 1: the client has imported and mapped the memory
};
constexpr double kShareReplySeconds = 10;  // how long the server waits for the reply

// Exercise 3: hands device memory of dev holding the bytes at data to the client at the other end of
// socket, and returns once the client has mapped it, holding none of it (a context of dev is
// current). Throws std::runtime_error when the client does not map it, holding none of it either.
void shareWithClient(int socket, CUdevice dev, const void* data, std::size_t bytes);

}  // namespace ex17
