// Lesson 01's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-01
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex01 {

// Exercise 1 of 3 (device-report): A report of what a device is and can do
//
// Task: A fleet inventory and every bug report your team files start with the same facts about the
// GPU. Write reportDevice: fill a DeviceReport for the visible device at ordinal, reading each fact
// with the calls lesson 01 shows. The driver is initialised by the caller.
//
//   R1: name is the device's whole name (product names run past 50 characters).
//   R2: uuid is its UUID in the form nvidia-smi -L prints: "GPU-" then the 16 bytes as lowercase hex
//       digits, two per byte, grouped 8-4-4-4-12.
//   R3: pciBusId is its PCI bus id as cuDeviceGetPCIBusId writes it.
//   R4: major and minor are its compute capability, and multiprocessors, totalMemory (past 4 GiB
//       too), managedMemory and concurrentManagedAccess are its multiprocessor count, total memory,
//       and whether it has managed memory and concurrent managed access.
//   R5: Every fact is read on the handle cuDeviceGet gives for the ordinal (nothing promises that a
//       CUdevice equals its ordinal).
//   R6: An ordinal that names no device (past the last, or negative) throws the wb::DriverError of
//       the call that refused it.
//
// The check: exercise01.device-report compares every field of the report of every visible device
// with what the driver says (the UUID byte by byte, parsed back from your text). Then it does the
// same for three devices of its own: while they stand in, the device calls of lesson 01 answer for
// them instead of this machine's GPUs, with handles that are not their ordinals, a 55-character
// name, UUID bytes below 0x10 and from 0x80 up, a PCI bus id that is not this machine's, more than
// 4 GiB, managed memory without concurrent managed access, and neither. The ordinal one past the
// last must throw wb::DriverError with CUDA_ERROR_INVALID_DEVICE, and -1 must throw wb::DriverError.
//
// Learn it in: lesson 01, step 3 ("What each device is and can do")
DeviceReport reportDevice(int ordinal) {
  wb::notDone();
}

// Exercise 2 of 3 (eligible-devices): The devices a build can run on
//
// Task: A server was built for compute capability need.major.need.minor and up, needs
// need.memoryBytes of device memory, and perhaps concurrent managed access; at start it must pick
// the GPUs it can use instead of failing at the first kernel launch. Write eligibleDevices. Read
// each device's facts with cuDeviceGetAttribute and cuDeviceTotalMem on the handle cuDeviceGet
// gives, as lesson 01 does. The driver is initialised by the caller.
//
//   R1: It returns the ordinals of all the visible devices that meet every requirement, in
//       ascending order (empty when none does).
//   R2: A compute capability is a version: 9.0 is newer than 8.6, and 12.0 newer than 9.0, and a
//       device of exactly need.major.need.minor meets it.
//   R3: At least need.memoryBytes means exactly that much is enough.
//   R4: Concurrent managed access is required only when need asks for it, and then a device
//       without it is left out.
//   R5: The list holds ordinals, not handles.
//
// The check: exercise01.eligible-devices builds requirements from the devices' own values (their
// exact compute capability and memory, one minor version more, one byte more, an older major
// version with a higher minor, concurrent managed access) and compares your list with the devices
// that meet each. Then it does the same on three devices of its own, which the device calls of
// lesson 01 answer for while they stand in: compute capability 8.6 without concurrent managed
// access, 12.0, and 7.5 without managed memory, with handles that are not their ordinals.
//
// Learn it in: lesson 01, step 3 ("What each device is and can do")
std::vector<int> eligibleDevices(const Requirements& need) {
  wb::notDone();
}

// Exercise 3 of 3 (device-by-uuid): Finding a GPU by its UUID from a library's first call
//
// Task: A deployment names its GPU by UUID (ordinals change with CUDA_VISIBLE_DEVICES and between
// machines), and your library's entry point may be the first CUDA call of the process. Write
// ordinalOfUuid: take the UUID as nvidia-smi -L prints it ("GPU-" and 8-4-4-4-12 hex digits).
//
//   R1: It does not assume anyone initialised the driver: as the process's first CUDA call it
//       answers, and leaves the driver initialised.
//   R2: It returns the ordinal of the visible device that has the UUID, its hex letters in either
//       case.
//   R3: Only the whole UUID names a device: a UUID no device has, a part of one, a longer text, or
//       an empty string gives -1.
//   R4: It returns the ordinal, not the device's handle.
//
// The check: exercise01.device-by-uuid runs in a fresh child process where nothing has called
// cuInit: your function's first call, with a UUID no device has, must return -1 and leave the
// driver initialised; then every device's UUID, in lower and in upper case, must give its ordinal.
// Then, with three devices of the check's own standing in (two whose UUIDs differ only in the last
// digit, UUID bytes below 0x10 and from 0x80 up, handles that are not their ordinals), every UUID
// in lower, upper and mixed case must give its ordinal, and a UUID cut after its first group or its
// last digit, one with a digit more, "GPU-" alone and an empty string must give -1.
//
// Learn it in: lesson 01, step 2 ("Every other call waits for cuInit")
int ordinalOfUuid(const std::string& uuid) {
  wb::notDone();
}

}  // namespace ex01
