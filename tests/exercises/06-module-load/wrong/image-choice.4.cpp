// Wrong (R4): returns the first cubin in the list that runs, else the first PTX that runs
//
// "The plugin lists its images newest first." The task says the list is in no order: for an 8.9
// device with sm_90, sm_80, compute_75 and sm_86 it picks sm_80 over sm_86, and `got == expected`
// fails.
#include "exercises.hpp"

namespace ex06 {

const Image* chooseImage(unsigned deviceArch, const std::vector<Image>& images) {
  const Image* firstPtx = nullptr;
  for (const Image& image : images) {
    if (image.ptx) {
      if (image.arch <= deviceArch && !firstPtx) firstPtx = &image;
    } else if (image.arch / 10 == deviceArch / 10 && image.arch % 10 <= deviceArch % 10) {
      return &image;
    }
  }
  return firstPtx;
}

}  // namespace ex06
